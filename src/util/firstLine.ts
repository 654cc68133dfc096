/** The first line of a (possibly multi-line) text: what a one-line summary shows. */
export function firstLine(text: string): string {
  return text.split("\n", 1)[0]!;
}

/** The first line of an error's message (or of the thrown value as text). */
export function errorFirstLine(error: unknown): string {
  return firstLine(error instanceof Error ? error.message : String(error));
}

/** The first line cut to `max` characters, with `…` when cut: a description in a listing. */
export function summaryLine(text: string, max = 100): string {
  const line = firstLine(text);
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
