// C0 controls, DEL, C1 controls, the Unicode line and paragraph separators, and the bidirectional overrides and
// isolates: characters that move the cursor, recolour or clear a terminal, or make text read differently from
// what it is ("Trojan source"). Tab and newline are kept by `escapeControlCharacters` unless `all` is set.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const CONTROL_ALL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escape = (character: string): string => {
  if (character === "\n") return "\\n";
  if (character === "\t") return "\\t";
  if (character === "\r") return "\\r";
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`;
};

/**
 * `text` with its control characters written as escapes (`\u001b`, `\r`), so that a key or value read from a
 * user's file and quoted in an error can neither drive the terminal (colours, clearing the screen) nor disguise
 * itself. With `all`, tab and newline are escaped too: a quoted key must stay on one line, or it could forge the
 * next line of an error.
 */
export function escapeControlCharacters(text: string, options: { all?: boolean } = {}): string {
  return text.replace(options.all ? CONTROL_ALL : CONTROL, escape);
}

/** Characters JSON.stringify leaves raw that a terminal may act on or that disguise text: DEL, C1, separators, bidi. */
const JSON_UNESCAPED_CONTROL = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text (from `JSON.stringify`) with the control characters JSON leaves raw written as `\uXXXX` escapes: the same
 * data for a parser, nothing a terminal acts on. Such characters can only stand inside strings, where the escape
 * means the same character.
 */
export function escapeJsonControlCharacters(json: string): string {
  return json.replace(JSON_UNESCAPED_CONTROL, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
