import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/** A cell as it ran, for the .ipynb file. */
export interface RanCell {
  kind: "python_cell" | "markdown_cell";
  source: string;
  /** What a code cell printed, then its traceback. */
  output?: string;
  /** Why a code cell failed: its exception's class and message. */
  error?: { type: string; message: string };
}

/**
 * The cells as a Jupyter notebook (nbformat 4.5): markdown cells, code cells with their execution count and
 * output (a stdout stream, or an error output carrying the traceback's lines), and a Python 3 kernelspec, so that
 * Jupyter, VS Code and nbformat open it as it is.
 */
export function toNotebook(cells: readonly RanCell[]): Record<string, unknown> {
  let count = 0;
  return {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: { name: "python3", display_name: "Python 3", language: "python" },
      language_info: { name: "python" },
    },
    cells: cells.map((cell) => {
      const base = { id: randomBytes(4).toString("hex"), metadata: {}, source: lines(cell.source) };
      if (cell.kind === "markdown_cell") return { cell_type: "markdown", ...base };
      count += 1;
      const text = cell.output ?? "";
      const outputs = cell.error
        ? [{ output_type: "error", ename: cell.error.type, evalue: cell.error.message, traceback: text.replace(/\n$/, "").split("\n") }]
        : text === ""
          ? []
          : [{ output_type: "stream", name: "stdout", text: lines(text) }];
      return { cell_type: "code", execution_count: count, ...base, outputs };
    }),
  };
}

/** Write the notebook file (its folder is made if needed). */
export function writeNotebook(file: string, cells: readonly RanCell[]): void {
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  writeFileSync(file, `${JSON.stringify(toNotebook(cells), null, 1)}\n`);
}

/** nbformat's multi-line strings: a list of lines, each but the last ending in a newline. */
function lines(text: string): string[] {
  return text === "" ? [] : text.split(/(?<=\n)/);
}
