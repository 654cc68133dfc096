/** A CSV record over the cap: where it starts and how big it is. */
export interface OversizedRecord {
  lineNumber: number;
  bytes: number;
  /** No record with any text came before it: in a CSV with a header row, it is the header. */
  first: boolean;
}

/**
 * The bytes of a CSV stream as they are, except a record longer than `maxBytes`: that one is read through without
 * being kept (memory stays at `maxBytes` whatever its size) and replaced by as many empty lines as it spanned, so
 * that csv-parse (which skips empty lines) numbers the records after it right; `onOversized` is told where it was.
 *
 * A record ends at a newline outside quotes; a `"` opens or closes a quoted field (an escaped quote, `""`, closes
 * and opens again): csv-parse's defaults, which the batch uses.
 */
export async function* capCsvRecords(stream: AsyncIterable<Buffer>, maxBytes: number, onOversized: (record: OversizedRecord) => void): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  /** Bytes of the current record so far, kept or not. */
  let length = 0;
  let quoted = false;
  /** The first line of the current record, and the newlines inside it so far (in quoted fields). */
  let startLine = 1;
  let innerNewlines = 0;
  let sawRecord = false;
  const addToRecord = (piece: Buffer): void => {
    length += piece.length;
    if (length > maxBytes) held = [];
    else if (piece.length > 0) held.push(piece);
  };
  /** The current record ends (with its newline, unless the stream ended): what goes on to csv-parse in its place. */
  const endRecord = (out: Buffer[], newline: boolean): void => {
    if (length > maxBytes) {
      onOversized({ lineNumber: startLine, bytes: length - (newline ? 1 : 0), first: !sawRecord });
      out.push(Buffer.from("\n".repeat(innerNewlines + (newline ? 1 : 0))));
    } else out.push(...held);
    // An empty line (csv-parse skips it) is not a record; checked only until the first record.
    sawRecord ||= length > maxBytes || held.some((piece) => piece.some((byte) => byte !== 0x0a && byte !== 0x0d));
    startLine += innerNewlines + 1;
    held = [];
    length = 0;
    innerNewlines = 0;
  };
  for await (const chunk of stream) {
    const out: Buffer[] = [];
    let position = 0;
    /** Where the current record's part of this chunk starts. */
    let start = 0;
    // The next quote at or after `position`, searched again only once `position` has passed it (-1: none left).
    let nextQuote = -2;
    const quoteFrom = (from: number): number => (nextQuote === -1 || nextQuote >= from ? nextQuote : (nextQuote = chunk.indexOf(0x22, from)));
    for (;;) {
      if (quoted) {
        const close = quoteFrom(position);
        const end = close === -1 ? chunk.length : close;
        for (let at = chunk.indexOf(0x0a, position); at !== -1 && at < end; at = chunk.indexOf(0x0a, at + 1)) innerNewlines += 1;
        if (close === -1) break;
        quoted = false;
        position = close + 1;
        continue;
      }
      const newline = chunk.indexOf(0x0a, position);
      const open = quoteFrom(position);
      if (open !== -1 && (newline === -1 || open < newline)) {
        quoted = true;
        position = open + 1;
        continue;
      }
      if (newline === -1) break;
      addToRecord(chunk.subarray(start, newline + 1));
      endRecord(out, true);
      start = position = newline + 1;
    }
    addToRecord(chunk.subarray(start));
    if (out.length > 0) yield out.length === 1 ? out[0]! : Buffer.concat(out);
  }
  if (length > 0) {
    const out: Buffer[] = [];
    endRecord(out, false);
    yield Buffer.concat(out);
  }
}
