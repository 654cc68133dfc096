/**
 * Where `text` stops being JSON, as a 1-based line and column, found by a scan of our own (undefined when the scan
 * finds no fault). For files that hold secrets: JSON.parse's message quotes the text around the fault (Node 20:
 * `Unexpected token 's', ..."API_KEY": sk-pro"...`), so such a file's error must never carry it; a position does not.
 */
export function jsonErrorPosition(text: string): { line: number; column: number } | undefined {
  const offset = jsonErrorOffset(text);
  if (offset === undefined) return undefined;
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf("\n") + 1;
  return { line: before.split("\n").length, column: offset - lineStart + 1 };
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

/** The offset of the first character at which `text` is not JSON (RFC 8259), or undefined when all of it is. */
function jsonErrorOffset(text: string): number | undefined {
  let at = 0;
  const space = (): void => {
    while (at < text.length && " \t\n\r".includes(text[at]!)) at++;
  };
  const string = (): boolean => {
    at++;
    while (at < text.length) {
      const char = text[at]!;
      if (char === '"') {
        at++;
        return true;
      }
      if (char === "\\") {
        ESCAPE.lastIndex = at;
        if (!ESCAPE.test(text)) return false;
        at = ESCAPE.lastIndex;
      } else if (char < " ") {
        return false;
      } else {
        at++;
      }
    }
    return false;
  };
  // Members of an object or items of an array, after its opening bracket.
  const members = (close: "}" | "]"): boolean => {
    at++;
    space();
    if (text[at] === close) {
      at++;
      return true;
    }
    for (;;) {
      if (close === "}") {
        space();
        if (text[at] !== '"' || !string()) return false;
        space();
        if (text[at] !== ":") return false;
        at++;
      }
      if (!value()) return false;
      space();
      if (text[at] === ",") {
        at++;
        continue;
      }
      if (text[at] !== close) return false;
      at++;
      return true;
    }
  };
  const value = (): boolean => {
    space();
    const char = text[at];
    if (char === "{") return members("}");
    if (char === "[") return members("]");
    if (char === '"') return string();
    for (const literal of ["true", "false", "null"]) {
      if (text.startsWith(literal, at)) {
        at += literal.length;
        return true;
      }
    }
    NUMBER.lastIndex = at;
    if (!NUMBER.test(text)) return false;
    at = NUMBER.lastIndex;
    return true;
  };
  if (!value()) return Math.min(at, text.length);
  space();
  return at < text.length ? at : undefined;
}
