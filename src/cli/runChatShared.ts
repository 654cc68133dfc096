import { ConfigError } from "../errors.js";
import { terminalText } from "../util/terminalText.js";

/** What `lllm run` and `lllm chat` share: their `--max-steps` flag, and event text cut to one line. */

/** `--max-steps N`: a whole number >= 0. */
export function parseCount(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new ConfigError("usage_max_steps", `--max-steps must be a whole number >= 0 (got \`${text}\`)`, { location: { file: "--max-steps" } });
  return value;
}

/**
 * A text a model or a tool produced, for a line on stderr: on one line (every run of whitespace one space), its
 * control characters shown as escapes (see `terminalText`), cut to `width` characters with `…`.
 */
export function oneLine(text: string, width = 120): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const shown = terminalText(flat);
  if (shown.length <= width) return shown;
  // Cut by the text's characters, each shown whole: never inside an escape (`\u001b`) nor between the two halves
  // of a character beyond the BMP (an emoji), which would print as a broken character.
  let cut = "";
  for (const character of flat) {
    const piece = terminalText(character);
    if (cut.length + piece.length > width - 1) break;
    cut += piece;
  }
  return `${cut}…`;
}
