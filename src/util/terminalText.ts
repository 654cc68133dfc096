import { escapeControlCharacters } from "./escapeControlCharacters.js";

/**
 * The styles lllm itself writes (`paint` in cli/output.ts, the test report's marks): bold, dim, their end, red,
 * green, yellow, cyan and the end of a colour. Nothing else that starts with ESC is lllm's own.
 */
const OWN_STYLE = /(\u001b\[(?:1|2|22|31|32|33|36|39)m)/;

/**
 * Text that a model, a tool, an MCP server or a package produced, made safe to print on a terminal: every control
 * character but newline and tab is written as an escape (`\u001b`, `\r`), so an answer or a tool's line can neither
 * drive the terminal (hide what follows with `ESC[8m`, set the title, clear the screen, move the cursor back over
 * a question) nor read differently from what it is (bidirectional overrides). With `keepOwnStyles`, the exact
 * colour sequences lllm writes are kept: for a whole line that lllm composed and painted, as a last line of
 * defence (a model's text should have been escaped without them before it was painted).
 */
export function terminalText(text: string, options: { keepOwnStyles?: boolean } = {}): string {
  if (!options.keepOwnStyles) return escapeControlCharacters(text);
  // split with a capturing group: the styles stand at the odd places.
  return text
    .split(OWN_STYLE)
    .map((piece, index) => (index % 2 === 1 ? piece : escapeControlCharacters(piece)))
    .join("");
}
