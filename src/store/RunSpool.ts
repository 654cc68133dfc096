import { closeSync, openSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { newRunId } from "../util/newRunId.js";
import type { SpoolEntry, SpoolHeader } from "./SpoolEntry.js";
import { spoolFolder } from "./storeFiles.js";
import { makePrivateFolder } from "../util/privateFolder.js";
import { distrustFolder } from "../config/distrust.js";

/**
 * The format of the spool's lines; a merger leaves a file of a version it does not know for the lllm that does.
 * 3: a tool result is written once (`resultInRow`, `StoredMessage.resultOf`); a merger of 3 reads 2 as well.
 */
export const SPOOL_VERSION = 3;

/**
 * Past this size a spool file is closed and the next line begins a new one, so that a long-lived process (a big
 * batch, a queue worker) does not keep one ever-growing file: closed files are deleted once merged.
 */
const ROTATE_BYTES = 64 * 1024 * 1024;

/**
 * Lines that need not be on disk at once (a run's start, its model and tool calls) wait at most this long, so that a
 * batch writes the lines of many runs in one `write`; a run's outcome is written at once, with all that waits.
 */
const FLUSH_DELAY_MS = 200;

/** Pending lines past this size are written at once (a run with large tool results does not wait in memory). */
const MAX_PENDING_BYTES = 256 * 1024;

/**
 * Where a process records its runs: an append-only file of its own in the store's spool folder (`logs.spool/`), one
 * JSON line per event (no database, no lock). A run's outcome is written at once, with whatever waits before it, so a
 * run that finished is on disk for good when its recorder returns (a batch writes its result line after); its start
 * and its model and tool calls go with the next such write, or at most `FLUSH_DELAY_MS` later, or when the process
 * exits. So SIGKILL loses at most what the last moment recorded (a run that began then is not listed; one that began
 * before reads as crashed). The next process that reads the log (`lllm logs`, the viewer, `--continue`) merges the
 * spool into `logs.db` (see `mergeSpool`).
 *
 * Recording thus never loads SQLite: a single `lllm run` saves libsql's load and memory, and a batch pays about one
 * `write` per item instead of transactions.
 */
export class RunSpool {
  static readonly #byFile = new Map<string, RunSpool>();
  static readonly #byFolder = new Map<string, RunSpool>();
  /** One `exit` hook for every spool of the process: a library caller may record into many homes (one each). */
  static #exitHook = false;

  /** The process's spool for the store `file` (`$LLLM_HOME/logs.db`). */
  static of(file: string): RunSpool {
    // By the name as given first: a batch asks once per item.
    let spool = RunSpool.#byFile.get(file);
    if (spool) return spool;
    const folder = path.resolve(spoolFolder(file));
    spool = RunSpool.#byFolder.get(folder);
    if (!spool) RunSpool.#byFolder.set(folder, (spool = new RunSpool(folder)));
    RunSpool.#byFile.set(file, spool);
    return spool;
  }

  readonly folder: string;
  #fd: number | undefined;
  #bytes = 0;
  #pending: string[] = [];
  #pendingBytes = 0;
  #timer: NodeJS.Timeout | undefined;
  #warned = false;
  #losses = 0;

  private constructor(folder: string) {
    this.folder = folder;
  }

  /**
   * Append one line: at once with what is pending when `now` (a run's start or outcome), else within
   * `FLUSH_DELAY_MS`. Throws when the spool cannot be written (the recorder tells the user, once).
   */
  append(entry: SpoolEntry, options: { now: boolean }): void {
    if (!RunSpool.#exitHook) {
      // What waits is written when the process ends, however it ends short of a kill (a return, exit(), a signal lllm handles).
      RunSpool.#exitHook = true;
      process.on("exit", () => {
        for (const spool of RunSpool.#byFolder.values()) spool.close();
      });
    }
    const line = `${JSON.stringify(entry)}\n`;
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    if (options.now || this.#pendingBytes >= MAX_PENDING_BYTES) this.flush();
    else if (this.#timer === undefined) {
      // One timer at a time, left running by the writes in between (a batch would otherwise set and clear one per
      // item): when it fires it writes whatever waits then, often nothing.
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        try {
          this.flush();
        } catch {
          // Told with the next line the recorder appends at once (or not at all: these calls are lost).
        }
      }, FLUSH_DELAY_MS);
      this.#timer.unref(); // never keeps the process alive; the exit hook writes what is left
    }
  }

  /**
   * How many writes failed so far, each losing the lines it held: a recorder that refers to a line it wrote (a tool
   * result's row) does so only while this is what it was when that line was appended.
   */
  get losses(): number {
    return this.#losses;
  }

  /** Write what is pending. */
  flush(): void {
    if (this.#pending.length === 0) return;
    const text = this.#pending.length === 1 ? this.#pending[0]! : this.#pending.join("");
    this.#pending = [];
    this.#pendingBytes = 0;
    const fd = this.#fd ?? this.#begin();
    try {
      this.#bytes += writeAll(fd, text);
    } catch (error) {
      // The file may end in part of a line now: leave it (a merger ignores a last line without its newline) and
      // begin a new one next time, so that no later line is glued to the broken one.
      this.#losses += 1;
      this.#drop();
      throw error;
    }
    if (this.#bytes >= ROTATE_BYTES) this.close();
  }

  /** Tell the user once per process that the spool cannot be written (a batch would otherwise say it per item). */
  warnOnce(warn: (message: string) => void, message: string): void {
    if (this.#warned) return;
    this.#warned = true;
    warn(message);
  }

  /**
   * Write what is pending and end the file with a `close` line: a merger may delete it once merged. The next line
   * begins a new file.
   */
  close(): void {
    try {
      this.flush();
    } catch {
      // The disk is full or the folder gone: nothing more can be kept.
    }
    const fd = this.#fd;
    if (fd === undefined) return;
    try {
      writeAll(fd, `${JSON.stringify({ close: true } satisfies SpoolEntry)}\n`);
    } catch {
      // The process is ending or the disk is full: the merger tells an ended writer by its process being gone.
    }
    this.#drop();
  }

  #begin(): number {
    // The store's folder (LLLM_HOME) first: made 0700, or tightened when it is ours and others can read it.
    makePrivateFolder(path.dirname(this.folder));
    // Runs hold prompts and answers: never into a folder of someone else's, nor one others may write to.
    const distrust = distrustFolder(this.folder);
    if (distrust !== undefined) throw new Error(distrust);
    makePrivateFolder(this.folder);
    const file = path.join(this.folder, `${newRunId()}-${process.pid}.jsonl`);
    // Exclusive: the name is new; 0600: the lines hold transcripts.
    const fd = openSync(file, "ax", 0o600);
    try {
      const header: SpoolHeader = { spool: SPOOL_VERSION, pid: process.pid, host: host() };
      this.#bytes = writeAll(fd, `${JSON.stringify(header)}\n`);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    this.#fd = fd;
    return fd;
  }

  #drop(): void {
    const fd = this.#fd;
    this.#fd = undefined;
    this.#bytes = 0;
    if (fd === undefined) return;
    try {
      closeSync(fd);
    } catch {
      // Already closed.
    }
  }
}

/** Write the whole text (a regular file takes it in one call, short of an error; loop for the rare short write). */
function writeAll(fd: number, text: string): number {
  const length = Buffer.byteLength(text, "utf8");
  // Most lines go in one call without a copy; a short write (a full pipe, a signal) goes on from where it stopped.
  let written = writeSync(fd, text, null, "utf8");
  if (written < length) {
    const bytes = Buffer.from(text, "utf8");
    while (written < length) written += writeSync(fd, bytes, written, length - written);
  }
  return length;
}

let hostName: string | undefined;

/** This machine's name, asked once: a run still marked running is crashed only if its process is gone from this host. */
export function host(): string {
  return (hostName ??= hostname());
}
