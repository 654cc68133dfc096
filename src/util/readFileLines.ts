import { open } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";

/** Bytes read from the file at a time, into one buffer reused to the end. */
const CHUNK_BYTES = 64 * 1024;

/**
 * The lines of a UTF-8 file (split on `\n`; a `\r` before it stays), read through one reused buffer. A read stream
 * makes a new 64 KB Buffer per chunk, allocated in the C heap: reading a results file of 50 MB piled them up faster
 * than the garbage collector freed them, and the C heap keeps its size once grown. (`batch/readLines` splits a
 * stream's own chunks, keeping pieces of them across chunks: it cannot read into a buffer that is reused.)
 */
export async function* readFileLines(file: string): AsyncGenerator<string> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.allocUnsafeSlow(CHUNK_BYTES);
    const decoder = new StringDecoder("utf8");
    let partial = "";
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      const lines = (partial + decoder.write(buffer.subarray(0, bytesRead))).split("\n");
      partial = lines.pop()!;
      yield* lines;
    }
    partial += decoder.end();
    if (partial !== "") yield partial;
  } finally {
    await handle.close();
  }
}
