import { escapeControlCharacters } from "../util/escapeControlCharacters.js";

/**
 * A key (or short value) from a user's file, quoted for a message: `` `name` ``. Control characters, newlines
 * included, are written as escapes: a key must not recolour the terminal, nor forge the next line of an error.
 */
export function quoteKey(key: string): string {
  return `\`${escapeControlCharacters(key, { all: true })}\``;
}
