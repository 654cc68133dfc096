import { closeSync, createReadStream, existsSync, fdatasyncSync, ftruncateSync, openSync, readSync, renameSync, statSync, writeSync } from "node:fs";
import { createInterface } from "node:readline";
import { redactSecrets } from "../util/redact.js";
import { batchResultJson, type BatchResult } from "./BatchItem.js";
import { writeOwnStdout } from "../util/ownStdout.js";

export interface OpenBatchOutputOptions {
  /** `--out`; without it the lines go to standard output (and nothing can be resumed). */
  file?: string;
  /** `--ordered`: lines in input order, whatever order the items finish in. */
  ordered: boolean;
  /** `--retry-failed`: failed items of an earlier run are dropped from the file and run again. */
  retryFailed: boolean;
}

/**
 * The NDJSON results. Each line is written with one `write(2)` on a file opened for appending, so a crash leaves
 * whole lines only (a torn last line from a power cut is cut off when the file is opened again). Opening an existing
 * file reads the ids already done: a rerun skips them.
 */
export class BatchOutput {
  /** Ids already in the file, with their status. */
  readonly done: Map<string, BatchResult["status"]>;
  readonly #fd: number | undefined;
  readonly #ordered: boolean;
  /** --ordered: lines waiting for an earlier item, by index. */
  readonly #waiting = new Map<number, string | null>();
  #next = 0;

  private constructor(fd: number | undefined, done: Map<string, BatchResult["status"]>, ordered: boolean) {
    this.#fd = fd;
    this.done = done;
    this.#ordered = ordered;
  }

  static async open(options: OpenBatchOutputOptions): Promise<BatchOutput> {
    const done = new Map<string, BatchResult["status"]>();
    if (options.file === undefined) return new BatchOutput(undefined, done, options.ordered);
    if (existsSync(options.file)) {
      cutTornLine(options.file);
      const kept: string[] = [];
      const lines = createInterface({ input: createReadStream(options.file), crlfDelay: Infinity });
      for await (const line of lines) {
        const result = parseLine(line);
        if (!result) continue;
        done.set(result.id, result.status);
        if (options.retryFailed && result.status === "ok") kept.push(line);
      }
      if (options.retryFailed && [...done.values()].some((status) => status !== "ok")) {
        // Rewritten whole and renamed over: a crash now leaves the old file or the new one, never a mix.
        for (const [id, status] of done) if (status !== "ok") done.delete(id);
        const temporary = `${options.file}.${process.pid}.tmp`;
        const fd = openSync(temporary, "w");
        writeSync(fd, kept.map((line) => `${line}\n`).join(""));
        fdatasyncSync(fd);
        closeSync(fd);
        renameSync(temporary, options.file);
      }
    }
    return new BatchOutput(openSync(options.file, "a"), done, options.ordered);
  }

  /** With --ordered, the lines finished but waiting for an earlier item (kept in memory). */
  get held(): number {
    return this.#waiting.size;
  }

  /** The item at `index` finished: write its line (with --ordered, once every earlier item is written). */
  write(index: number, result: BatchResult): void {
    this.#emit(index, `${redactSecrets(JSON.stringify(batchResultJson(result)))}\n`);
  }

  /** The item at `index` was skipped (already done): with --ordered, the items after it need not wait for it. */
  skip(index: number): void {
    this.#emit(index, null);
  }

  #emit(index: number, line: string | null): void {
    if (!this.#ordered) {
      if (line !== null) this.#writeLine(line);
      return;
    }
    this.#waiting.set(index, line);
    while (this.#waiting.has(this.#next)) {
      const ready = this.#waiting.get(this.#next)!;
      this.#waiting.delete(this.#next);
      this.#next += 1;
      if (ready !== null) this.#writeLine(ready);
    }
  }

  #writeLine(line: string): void {
    if (this.#fd === undefined) writeOwnStdout(line);
    else writeSync(this.#fd, line);
  }

  /** Flush to disk and close. With --ordered, lines still waiting for an item that never ran are written now. */
  close(): void {
    for (const index of [...this.#waiting.keys()].sort((a, b) => a - b)) {
      const line = this.#waiting.get(index);
      if (line) this.#writeLine(line);
    }
    this.#waiting.clear();
    if (this.#fd === undefined) return;
    fdatasyncSync(this.#fd);
    closeSync(this.#fd);
  }
}

function parseLine(line: string): { id: string; status: BatchResult["status"] } | undefined {
  try {
    const value = JSON.parse(line) as Partial<BatchResult>;
    if (typeof value.id !== "string" || (value.status !== "ok" && value.status !== "error")) return undefined;
    return { id: value.id, status: value.status };
  } catch {
    return undefined;
  }
}

/** A file that does not end with a newline ends with a torn line (the machine went down mid-write): cut it off. */
function cutTornLine(file: string): void {
  const size = statSync(file).size;
  if (size === 0) return;
  const fd = openSync(file, "r+");
  try {
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    if (last[0] === 0x0a) return;
    // Find the last newline, reading backwards in blocks.
    const block = Buffer.alloc(65536);
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - block.length);
      const length = end - start;
      readSync(fd, block, 0, length, start);
      const at = block.subarray(0, length).lastIndexOf(0x0a);
      if (at >= 0) return ftruncateSync(fd, start + at + 1);
      end = start;
    }
    ftruncateSync(fd, 0);
  } finally {
    closeSync(fd);
  }
}
