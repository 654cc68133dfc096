/** The first line of a (possibly multi-line) message: what a one-line summary of an error shows. */
export function firstLine(text: string): string {
  return text.split("\n", 1)[0]!;
}
