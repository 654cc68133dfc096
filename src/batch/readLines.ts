/** One line of a dataset: its text, or (past the cap) only its size, for an error that names it. */
export type DatasetLine = { lineNumber: number; text: string } | { lineNumber: number; text?: undefined; bytes: number };

/**
 * The lines of a byte stream (split on `\n`, a trailing `\r` removed), at most `maxBytes` each: a longer line is
 * read through without being kept (memory stays at `maxBytes` whatever the line's size; readline would build the
 * whole line and fail with a RangeError past V8's longest string) and comes out as its size only. Given chunk by
 * chunk, the lines each chunk ends (one await per chunk, not per line: about as fast as readline).
 */
export async function* readLines(stream: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<DatasetLine[]> {
  let parts: Buffer[] = [];
  /** Bytes of the current line so far, kept or not. */
  let length = 0;
  let lineNumber = 0;
  const finish = (): DatasetLine => {
    lineNumber += 1;
    const text = length > maxBytes ? undefined : decode(parts);
    // A UTF-8 byte order mark (Windows editors, PowerShell's Out-File) is no part of the first line: left in, it
    // makes that line's JSON unreadable and puts an invisible character into a text line's input.
    const line: DatasetLine = text === undefined ? { lineNumber, bytes: length } : { lineNumber, text: lineNumber === 1 && text.startsWith(BOM) ? text.slice(BOM.length) : text };
    parts = [];
    length = 0;
    return line;
  };
  for await (const chunk of stream) {
    const lines: DatasetLine[] = [];
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      length += piece.length;
      if (length > maxBytes) parts = [];
      else if (piece.length > 0) parts.push(piece);
      if (end === -1) break;
      lines.push(finish());
      start = end + 1;
    }
    if (lines.length > 0) yield lines;
  }
  if (length > 0) yield [finish()];
}

const BOM = "\uFEFF";

function decode(parts: Buffer[]): string {
  const text = parts.length === 1 ? parts[0]!.toString("utf8") : Buffer.concat(parts).toString("utf8");
  return text.endsWith("\r") ? text.slice(0, -1) : text;
}
