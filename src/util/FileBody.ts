import { randomUUID } from "node:crypto";
import { openAsBlob } from "node:fs";
import { open } from "node:fs/promises";
import type { Writable } from "node:stream";

/** A part of a `FileBody`: bytes, or the first `size` bytes of a file. */
export type FileBodyPart = Uint8Array | { file: string; size: number };

/** Bytes read from a file at a time, into one buffer reused for the whole body. */
const CHUNK_BYTES = 64 * 1024;

/**
 * A request body sent from files (and the bytes around them) through one small buffer, its length known before it
 * is sent. A batch job's upload of 40 MB then leaves no 40 MB of buffers behind for the garbage collector: Node's
 * fetch reads a file Blob or a form into a new buffer for each chunk, and they pile up until V8 collects them (tens
 * of MB of peak memory, which the C heap keeps afterwards). `nodeHttpFetch` sends it; it can be sent again (a
 * redirect within the origin, a retry).
 */
export class FileBody {
  readonly parts: readonly FileBodyPart[];
  /** The body's `content-type`. */
  readonly type: string;
  readonly size: number;

  constructor(parts: readonly FileBodyPart[], type: string) {
    this.parts = parts;
    this.type = type;
    this.size = parts.reduce((sum, part) => sum + (part instanceof Uint8Array ? part.byteLength : part.size), 0);
  }

  /** A `multipart/form-data` body of text fields and one file (as a browser's form would send it). */
  static multipart(fields: Record<string, string>, file: { field: string; name: string; type: string; file: string; size: number }): FileBody {
    const boundary = `lllm-${randomUUID()}`;
    let head = "";
    for (const [name, value] of Object.entries(fields)) head += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`;
    return new FileBody([Buffer.from(head), { file: file.file, size: file.size }, Buffer.from(`\r\n--${boundary}--\r\n`)], `multipart/form-data; boundary=${boundary}`);
  }

  /**
   * Write the body to `target` (a request), each chunk written before the buffer is read into again; a file that
   * has shrunk since fails the write (the request would be cut short).
   */
  async writeTo(target: Writable): Promise<void> {
    const write = (chunk: Uint8Array): Promise<void> => new Promise((resolve, reject) => target.write(chunk, (error) => (error ? reject(error) : resolve())));
    let buffer: Buffer | undefined;
    for (const part of this.parts) {
      if (part instanceof Uint8Array) {
        await write(part);
        continue;
      }
      buffer ??= Buffer.allocUnsafe(CHUNK_BYTES);
      const handle = await open(part.file, "r");
      try {
        for (let sent = 0; sent < part.size; ) {
          const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, part.size - sent), sent);
          if (bytesRead === 0) throw new Error(`${part.file} has fewer bytes than the ${part.size} announced`);
          await write(buffer.subarray(0, bytesRead));
          sent += bytesRead;
        }
      } finally {
        await handle.close();
      }
    }
  }

  /** The body as a Blob, for a `fetch` that cannot send a `FileBody` itself. */
  async toBlob(): Promise<Blob> {
    const parts = await Promise.all(this.parts.map(async (part) => (part instanceof Uint8Array ? part : (await openAsBlob(part.file)).slice(0, part.size))));
    return new Blob(parts, { type: this.type });
  }
}
