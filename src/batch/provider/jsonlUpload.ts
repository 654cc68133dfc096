import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { once } from "node:events";
import os from "node:os";
import path from "node:path";

/** A temporary file holding a job's requests, for `FileBody`. */
export interface RequestsFile {
  file: string;
  size: number;
}

/**
 * The JSONL of a job written line by line to a temporary file and handed to `use`, so that the upload streams from
 * disk (as a `FileBody`): a job of 50,000 requests is never one string in memory. The file is removed afterwards.
 */
export async function withJsonlFile<T>(lines: Iterable<unknown>, use: (file: RequestsFile) => Promise<T>): Promise<T> {
  return withTempFile((function* () {
    for (const line of lines) yield `${JSON.stringify(line)}\n`;
  })(), use);
}

/** A JSON array of `items` inside `head` and `tail`, in a temporary file as `withJsonlFile`. */
export async function withJsonArrayFile<T>(head: string, items: Iterable<unknown>, tail: string, use: (file: RequestsFile) => Promise<T>): Promise<T> {
  return withTempFile((function* () {
    yield head;
    let first = true;
    for (const item of items) {
      yield `${first ? "" : ","}${JSON.stringify(item)}`;
      first = false;
    }
    yield tail;
  })(), use);
}

async function withTempFile<T>(pieces: Iterable<string>, use: (file: RequestsFile) => Promise<T>): Promise<T> {
  const folder = await mkdtemp(path.join(os.tmpdir(), "lllm-batch-"));
  try {
    const file = path.join(folder, "requests.jsonl");
    const out = createWriteStream(file, { mode: 0o600 });
    for (const piece of pieces) {
      if (!out.write(piece)) await once(out, "drain");
    }
    out.end();
    await once(out, "finish");
    return await use({ file, size: out.bytesWritten });
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
