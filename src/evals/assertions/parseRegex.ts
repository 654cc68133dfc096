/** A `regex` value: a plain pattern, or `/pattern/flags`. */
export function parseRegex(text: string): { ok: true; regex: RegExp } | { ok: false; reason: string } {
  const literal = /^\/([\s\S]+)\/([dgimsuvy]*)$/.exec(text);
  try {
    return { ok: true, regex: literal ? new RegExp(literal[1]!, literal[2]!.replace("g", "")) : new RegExp(text) };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
}
