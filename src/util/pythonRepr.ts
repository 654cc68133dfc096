/**
 * Render a JSON-like value the way Python's `repr()` would: `{'city': 'Paris', 'days': [1, 2], 'metric': True}`.
 *
 * LLLM's tool results quote the call's arguments as a Python dict and note defaults as `(default: 'celsius')`;
 * models and existing prompts are used to that text, so we reproduce it instead of inventing a JS flavour.
 * Numbers are printed as JavaScript prints them (`1`, not Python's `1.0`): a JS number does not know whether it
 * was meant as a float. `undefined` and `null` both become `None`.
 */
export function pythonRepr(value: unknown): string {
  return repr(value, new Set());
}

function repr(value: unknown, seen: Set<object>): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string") return pythonStringRepr(value);
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "nan";
    if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
    return String(value);
  }
  if (typeof value === "bigint") return String(value);
  if (typeof value === "function") return `<function ${value.name || "<anonymous>"}>`;
  if (typeof value === "symbol") return String(value);
  if (typeof value !== "object") return String(value);
  // Python prints `[...]` / `{...}` for a container that contains itself.
  if (seen.has(value)) return Array.isArray(value) ? "[...]" : "{...}";
  seen.add(value);
  try {
    if (Array.isArray(value)) return `[${value.map((item) => repr(item, seen)).join(", ")}]`;
    const entries = Object.entries(value).map(([key, item]) => `${pythonStringRepr(key)}: ${repr(item, seen)}`);
    return `{${entries.join(", ")}}`;
  } finally {
    seen.delete(value);
  }
}

/** Characters Python's `str.isprintable()` rejects (other than the ASCII space), which `repr` escapes. */
const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Co}\p{Cn}]/u;

/**
 * Python's string repr: single quotes unless the text contains `'` and no `"`; backslash escapes for the quote,
 * `\\`, `\n`, `\r`, `\t`, and `\xNN` / `\uNNNN` / `\UNNNNNNNN` for other unprintable characters.
 */
export function pythonStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === quote || char === "\\") out += `\\${char}`;
    else if (char === "\n") out += "\\n";
    else if (char === "\r") out += "\\r";
    else if (char === "\t") out += "\\t";
    else if (char !== " " && (isLoneSurrogate(code) || NOT_PRINTABLE.test(char))) out += escapeCodePoint(code);
    else out += char;
  }
  return out + quote;
}

function isLoneSurrogate(code: number): boolean {
  // `for…of` yields a lone surrogate as its own one-unit string; a valid pair arrives as one code point.
  return code >= 0xd800 && code <= 0xdfff;
}

function escapeCodePoint(code: number): string {
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, "0")}`;
  return `\\U${code.toString(16).padStart(8, "0")}`;
}
