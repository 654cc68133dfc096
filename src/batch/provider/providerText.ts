import { escapeControlCharacters } from "../../util/escapeControlCharacters.js";

/**
 * A provider's text (a job id, its state, its message) as lllm's one-line notices quote it: every control character
 * escaped, line breaks and tabs too, so that a hostile or broken provider can neither start a line that reads as
 * lllm's own nor add a column to `--status`. The text itself is kept for the provider's API, unchanged.
 */
export function providerText(text: string): string {
  return escapeControlCharacters(text, { all: true });
}
