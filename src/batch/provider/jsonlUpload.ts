import { open, rm } from "node:fs/promises";
import path from "node:path";
import { processTempDir } from "../../util/processTempDir.js";

/** A temporary file holding a job's requests, for `FileBody`. */
export interface RequestsFile {
  file: string;
  size: number;
}

/**
 * The JSONL of a job (each line JSON text, a request's body spliced in as kept: not parsed to be stringified again)
 * written line by line to a temporary file and handed to `use`, so that the upload streams from
 * disk (as a `FileBody`): a job of 50,000 requests is never one string in memory. The file is removed afterwards.
 */
export async function withJsonlFile<T>(lines: Iterable<string>, use: (file: RequestsFile) => Promise<T>): Promise<T> {
  return withTempFile((function* () {
    for (const line of lines) yield `${line}\n`;
  })(), use);
}

/** A JSON array of `items` (each JSON text) inside `head` and `tail`, in a temporary file as `withJsonlFile`. */
export async function withJsonArrayFile<T>(head: string, items: Iterable<string>, tail: string, use: (file: RequestsFile) => Promise<T>): Promise<T> {
  return withTempFile((function* () {
    yield head;
    let first = true;
    for (const item of items) {
      yield first ? item : `,${item}`;
      first = false;
    }
    yield tail;
  })(), use);
}

async function withTempFile<T>(pieces: Iterable<string>, use: (file: RequestsFile) => Promise<T>): Promise<T> {
  const folder = processTempDir("lllm-batch-");
  try {
    const file = path.join(folder, "requests.jsonl");
    const size = await writePieces(file, pieces);
    return await use({ file, size });
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** Bytes gathered before a write to the temporary file. */
const STAGE_BYTES = 256 * 1024;

/**
 * Write `pieces` to a new file (mode 0600) through one staging buffer, and return its size. A write stream would
 * make each piece a Buffer of its own: 50,000 small buffers a job, allocated in the C heap faster than the garbage
 * collector frees them (tens of MB at a job's upload), and a C heap keeps its size once grown.
 */
async function writePieces(file: string, pieces: Iterable<string>): Promise<number> {
  const handle = await open(file, "wx", 0o600);
  try {
    const stage = Buffer.allocUnsafeSlow(STAGE_BYTES);
    let staged = 0;
    let size = 0;
    const writeAll = async (bytes: Uint8Array): Promise<void> => {
      for (let done = 0; done < bytes.byteLength; ) done += (await handle.write(bytes, done, bytes.byteLength - done)).bytesWritten;
      size += bytes.byteLength;
    };
    for (const piece of pieces) {
      const length = Buffer.byteLength(piece);
      if (staged + length > STAGE_BYTES) {
        await writeAll(stage.subarray(0, staged));
        staged = 0;
      }
      if (length > STAGE_BYTES) await writeAll(Buffer.from(piece));
      else staged += stage.write(piece, staged);
    }
    await writeAll(stage.subarray(0, staged));
    return size;
  } finally {
    await handle.close();
  }
}
