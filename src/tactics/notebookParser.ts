import { ParseError, type PromptParser } from "../prompts/index.js";

/** One cell the model wrote. */
export interface NotebookCell {
  kind: "python_cell" | "markdown_cell";
  source: string;
}

/** A reply of the notebook pattern, parsed. */
export interface NotebookReply {
  cells: NotebookCell[];
  /** `<TERMINATE_NOTEBOOK>` in a reply without code cells: the notebook is done. */
  terminate: boolean;
}

const CELL = /<(python_cell|markdown_cell)>([\s\S]*?)<\/\1>/g;

/**
 * Step 16's `notebook_parser`: the cells in order, and whether the notebook ends. A reply without cells (and
 * without the end tag) is a ParseError, so the agent asks the model again with this exact message.
 */
export const notebookParser: PromptParser = (content): NotebookReply => {
  const cells = [...content.matchAll(CELL)].map((match) => ({ kind: match[1] as NotebookCell["kind"], source: match[2]!.trim() }));
  const hasCode = cells.some((cell) => cell.kind === "python_cell");
  const terminate = content.includes("<TERMINATE_NOTEBOOK>") && !hasCode;
  if (cells.length === 0 && !terminate) {
    throw new ParseError("No cells found. Wrap code in <python_cell>...</python_cell>, or reply with <TERMINATE_NOTEBOOK> when you are done.");
  }
  return { cells, terminate };
};
