/**
 * A Markdown table, as the generated reference pages write them. Cells are escaped so that they stay one cell on
 * a code host: a `|` would end the cell, a line break the row, and `<word` would be taken for an HTML tag and
 * vanish (`--inputs <file>`); `lllm help` turns `&lt;` back into `<` for the terminal.
 */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]): string => `| ${cells.map(escapeCell).join(" | ")} |`;
  return [line(header), `|${header.map(() => "---").join("|")}|`, ...rows.map(line)].join("\n");
}

/** One table cell's text: `|` escaped, on one line, no tag-like `<`. Text inside backticks keeps its `<`. */
export function escapeCell(text: string): string {
  return text
    .replace(/\s*\n\s*/g, " ")
    .split(/(`[^`]*`)/)
    .map((part, index) => (index % 2 === 1 ? part : part.replace(/<(?=[A-Za-z/!?(])/g, "&lt;")))
    .join("")
    .replaceAll("|", "\\|");
}
