import { createReadStream } from "node:fs";

/** Non-empty lines of a file, counted as a stream (for the progress line's ETA; approximate for CSV). */
export async function countLines(file: string): Promise<number> {
  let count = 0;
  let lineHasText = false;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    for (const byte of chunk) {
      if (byte === 0x0a) {
        if (lineHasText) count += 1;
        lineHasText = false;
      } else if (byte !== 0x0d && byte !== 0x20) lineHasText = true;
    }
  }
  return count + (lineHasText ? 1 : 0);
}
