import { closeSync, createReadStream, fdatasyncSync, fstatSync, ftruncateSync, openSync, readSync, renameSync, statSync, truncateSync, unlinkSync, writeSync } from "node:fs";
import { Readable } from "node:stream";
import { createInterface } from "node:readline";
import { ConfigError, LllmError } from "../errors.js";
import { escapeJsonControlCharacters } from "../util/escapeControlCharacters.js";
import { redactSecrets } from "../util/redact.js";
import { batchResultJson, type BatchResult, type BatchSpending } from "./BatchItem.js";
import { writeOwnStdout } from "../util/ownStdout.js";
import { roundCost } from "../util/roundCost.js";

export interface OpenBatchOutputOptions {
  /** `--out`; without it the lines go to standard output (and nothing can be resumed). */
  file?: string;
  /** `--ordered`: lines in input order, whatever order the items finish in. */
  ordered: boolean;
  /** `--retry-failed`: failed items of an earlier run are dropped from the file and run again. */
  retryFailed: boolean;
}

/**
 * The NDJSON results. Each line is written whole on a file opened for appending, so a crash leaves whole lines only
 * (a torn last line from a power cut is cut off when the file is opened again); a write that fails (a full disk)
 * cuts its part-written line off at once and stops the writing, with an error that names the file. Opening an
 * existing file reads the ids already done (a rerun skips them) and what they spent (the budgets count it).
 */
export class BatchOutput {
  /** Ids already in the file, with their status. */
  readonly done: Map<string, BatchResult["status"]>;
  /** Tokens and dollars of the results already in the file (costs not known count as nothing). */
  readonly spent: BatchSpending;
  readonly #file: string | undefined;
  readonly #fd: number | undefined;
  /** The file's size after its last whole line (a regular file; undefined for a pipe or a device). */
  #size: number | undefined;
  /** Lines written by this run. */
  #written = 0;
  /** Set by the first failed write: nothing is written after it (the file stays a whole prefix). */
  #failure: LllmError | undefined;
  readonly #ordered: boolean;
  /** --ordered: lines waiting for an earlier item, by index. */
  readonly #waiting = new Map<number, string | null>();
  #next = 0;

  private constructor(options: { file?: string; fd?: number; done: Map<string, BatchResult["status"]>; spent: BatchSpending; ordered: boolean }) {
    this.#file = options.file;
    this.#fd = options.fd;
    this.done = options.done;
    this.spent = options.spent;
    this.#ordered = options.ordered;
    if (options.fd !== undefined) {
      const stat = fstatSync(options.fd);
      if (stat.isFile()) this.#size = stat.size;
    }
  }

  static async open(options: OpenBatchOutputOptions): Promise<BatchOutput> {
    const done = new Map<string, BatchResult["status"]>();
    const spent: BatchSpending = { promptTokens: 0, completionTokens: 0, cost: 0 };
    const { file } = options;
    if (file === undefined) return new BatchOutput({ done, spent, ordered: options.ordered });
    // Only a regular file is read back (a pipe or /dev/stdout as --out is written to, never read).
    if (isRegularFile(file)) {
      const torn = tornLineStart(file);
      const kept: string[] = [];
      const keptSpent: BatchSpending = { promptTokens: 0, completionTokens: 0, cost: 0 };
      // Every line is checked before the torn one is cut: a file that is not a results file is left as it is.
      const lines = createInterface({ input: torn === 0 ? Readable.from([]) : createReadStream(file, torn === undefined ? {} : { end: torn - 1 }), crlfDelay: Infinity });
      let lineNumber = 0;
      for await (const line of lines) {
        lineNumber += 1;
        if (line.trim() === "") continue;
        const result = parseLine(line);
        // Another file given as --out by mistake (notes, a dataset, a JSON file): appending to it, or --retry-failed
        // rewriting it with the results only, would spoil or lose it. Before anything is written.
        if (!result) throw notResults(file, lineNumber);
        done.set(result.id, result.status);
        addSpending(spent, result);
        if (options.retryFailed && result.status === "ok") {
          kept.push(line);
          addSpending(keptSpent, result);
        }
      }
      if (torn !== undefined) truncateSync(file, torn);
      if (options.retryFailed && [...done.values()].some((status) => status !== "ok")) {
        for (const [id, status] of done) if (status !== "ok") done.delete(id);
        rewrite(file, kept);
        // The dropped lines are no longer in the file: what the budgets count is what the file holds.
        Object.assign(spent, keptSpent);
      }
    }
    let fd: number;
    try {
      fd = openSync(file, "a");
    } catch (error) {
      throw unwritable(file, error, "");
    }
    return new BatchOutput({ file, fd, done, spent, ordered: options.ordered });
  }

  /** With --ordered, the lines finished but waiting for an earlier item (kept in memory). */
  get held(): number {
    return this.#waiting.size;
  }

  /** The item at `index` finished: write its line (with --ordered, once every earlier item is written). */
  write(index: number, result: BatchResult): void {
    // JSON.stringify leaves DEL, C1 controls and bidi overrides raw: a model's answer could drive the terminal that
    // shows the results (no --out) or `cat`s the file. Escaped, they are the same data for a parser.
    this.#emit(index, `${redactSecrets(escapeJsonControlCharacters(JSON.stringify(batchResultJson(result))))}\n`);
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
    if (this.#fd === undefined) {
      writeOwnStdout(line);
      return;
    }
    if (this.#failure) throw this.#failure;
    const bytes = Buffer.from(line);
    let written = 0;
    try {
      // A write may take part of the line (a disk that fills up mid-line): write the rest, or fail.
      while (written < bytes.length) written += writeSync(this.#fd, bytes, written, bytes.length - written);
    } catch (error) {
      // Cut the part-written line off now: the file ends with a whole line, which a rerun reads back.
      if (this.#size !== undefined && written > 0) ftruncateSync(this.#fd, this.#size);
      this.#failure = unwritable(this.#file!, error, `The ${formatLines(this.done.size + this.#written)} already in it ${this.done.size + this.#written === 1 ? "is" : "are"} whole and kept: `);
      throw this.#failure;
    }
    if (this.#size !== undefined) this.#size += bytes.length;
    this.#written += 1;
  }

  /**
   * Flush to disk and close. With --ordered, lines still waiting for an item that never ran are written now. The
   * file is closed whatever fails; the first failure is thrown.
   */
  close(): void {
    let failure: unknown;
    try {
      for (const index of [...this.#waiting.keys()].sort((a, b) => a - b)) {
        const line = this.#waiting.get(index);
        if (line) this.#writeLine(line);
      }
    } catch (error) {
      failure = error;
    }
    this.#waiting.clear();
    if (this.#fd !== undefined) {
      try {
        // Only a regular file is flushed: a pipe or /dev/stdout as --out has nothing to flush (fdatasync: EINVAL).
        if (failure === undefined && this.#failure === undefined && this.#size !== undefined) fdatasyncSync(this.#fd);
      } catch (error) {
        failure = unwritable(this.#file!, error, "");
      } finally {
        closeSync(this.#fd);
      }
    }
    if (failure !== undefined) throw failure;
  }
}

interface ReadLine {
  id: string;
  status: BatchResult["status"];
  promptTokens: number;
  completionTokens: number;
  cost: number;
}

/** A result line of an earlier run: its id and status, and what it spent (numbers only: a hand-edited line spends 0). */
function parseLine(line: string): ReadLine | undefined {
  try {
    const value = JSON.parse(line) as { id?: unknown; status?: unknown; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown }; cost?: unknown };
    if (typeof value.id !== "string" || (value.status !== "ok" && value.status !== "error")) return undefined;
    return { id: value.id, status: value.status, promptTokens: count(value.usage?.prompt_tokens), completionTokens: count(value.usage?.completion_tokens), cost: count(value.cost) };
  } catch {
    return undefined;
  }
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

function addSpending(total: BatchSpending, line: ReadLine): void {
  total.promptTokens += line.promptTokens;
  total.completionTokens += line.completionTokens;
  total.cost = roundCost(total.cost + line.cost);
}

function isRegularFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Rewritten whole and renamed over: a crash (or a full disk) leaves the old file or the new one, never a mix. */
function rewrite(file: string, lines: string[]): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    const fd = openSync(temporary, "w");
    try {
      const bytes = Buffer.from(lines.map((line) => `${line}\n`).join(""));
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, file);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // not created, or already renamed
    }
    throw unwritable(file, error, "--retry-failed could not rewrite it; it is unchanged: ");
  }
}

const DISK_FULL = new Set(["ENOSPC", "EDQUOT"]);

/** The results file cannot be written: what happened, in words, and that the same command resumes. */
function unwritable(file: string, error: unknown, kept: string): LllmError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason = code !== undefined && DISK_FULL.has(code) ? `the disk is full (${code})` : code === "EFBIG" ? "the file is too large for its file system (EFBIG)" : error instanceof Error ? error.message : String(error);
  const then = `${code !== undefined && DISK_FULL.has(code) ? "free some space, then" : "once it can be written,"} run the same command again: it skips the items already in ${file} and runs the rest.`;
  return new LllmError("batch_output_unwritable", `cannot write the results to ${file}: ${reason}`, { hint: kept === "" ? then[0]!.toUpperCase() + then.slice(1) : `${kept}${then}`, cause: error });
}

function formatLines(count: number): string {
  return `${count} result${count === 1 ? "" : "s"}`;
}

/** Refused as --out: the file has a line lllm batch did not write. */
function notResults(file: string, line: number): ConfigError {
  return new ConfigError("usage_out", "--out is not a results file: this line is no result of lllm batch (which appends its results to --out and reads back the ids already done)", { location: { file, line }, hint: "Give a new file, or the results file of an earlier run of the same batch (a line you edited there must stay one JSON result per line)." });
}

/**
 * Where the torn last line of a file starts, when it has one: a file that does not end with a newline ends with a
 * line cut short (the machine went down mid-write). Only a line begun as lllm writes one (`{"id":`, or a part of
 * that) is torn: the last line of another file is for the reading to refuse, not to cut.
 */
function tornLineStart(file: string): number | undefined {
  const size = statSync(file).size;
  if (size === 0) return undefined;
  const fd = openSync(file, "r");
  try {
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    if (last[0] === 0x0a) return undefined;
    // Find the last newline, reading backwards in blocks.
    const block = Buffer.alloc(65536);
    let start = 0;
    for (let end = size; end > 0; ) {
      const from = Math.max(0, end - block.length);
      const at = block.subarray(0, readSync(fd, block, 0, end - from, from)).lastIndexOf(0x0a);
      if (at >= 0) {
        start = from + at + 1;
        break;
      }
      end = from;
    }
    const head = Buffer.alloc(16);
    const text = head.subarray(0, readSync(fd, head, 0, head.length, start)).toString("latin1");
    return /^\{\s*"id"\s*:/.test(text) || '{"id":'.startsWith(text) ? start : undefined;
  } finally {
    closeSync(fd);
  }
}
