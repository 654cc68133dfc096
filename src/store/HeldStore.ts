import { statSync } from "node:fs";
import { RunStore, type RunStoreOptions } from "./RunStore.js";

/**
 * The run store of a long-lived process that looks things up in it now and then (a server reading back a response or
 * an A2A task it no longer holds in memory): opened at the first look-up and kept open. libsql's `close()` leaves a
 * connection's two files open until its statements are garbage-collected, so a server that opened and closed the store
 * for each look-up of an unknown id held ~500 more descriptors after 2,000 such requests (and grew to 229 MB where it
 * stays at 131 now): half the usual limit of 1,024 open files, which a client with the token could pass on purpose.
 *
 * What a fresh open would see is checked at each look-up: the store is opened again when its file is another one
 * (moved aside and made anew, as the run-log docs say to do with a damaged log), gone, of another mode or owner (made
 * writable, or taken over), or migrated by a newer lllm (which this one must then only read). A file that failed to
 * open fails again, without a new attempt, until it changes. Each look-up still merges the spool first, as every read
 * of the store does, and copies the write-ahead log into the file after (see `RunStore.checkpoint`).
 */
export class HeldStore {
  readonly file: string;
  readonly #options: RunStoreOptions;
  #store: RunStore | undefined;
  /** What the open store was opened on (see `fileOf`), and the schema version it found. */
  #opened: { file: string | undefined; version: number } | undefined;
  /** The last open that failed: on which file state (see `stateOf`), and its error. */
  #failed: { state: string | undefined; error: unknown } | undefined;
  #closed = false;

  constructor(file: string, options: RunStoreOptions = {}) {
    this.file = file;
    this.#options = options;
  }

  /**
   * `read` over the store; undefined when nothing was ever recorded (neither the log nor runs in its spool) or once
   * `close`d. Throws what opening the store throws (a damaged log: a `StoreError`).
   */
  read<T>(read: (store: RunStore) => T): T | undefined {
    if (this.#closed || !RunStore.exists(this.file)) {
      this.#release();
      return undefined;
    }
    if (this.#store && (fileOf(this.file) !== this.#opened?.file || this.#store.schemaVersion() !== this.#opened?.version)) this.#release();
    const store = this.#store ?? this.#open();
    try {
      return read(store);
    } finally {
      store.checkpoint();
    }
  }

  /** Close the store for good: a later `read` finds nothing (a stopped server's handler may still be called). */
  close(): void {
    this.#closed = true;
    this.#release();
  }

  #open(): RunStore {
    // Each failed open leaves its files open until a collection too: a damaged log is not opened again until it changes.
    const state = stateOf(this.file);
    if (this.#failed && this.#failed.state === state) throw this.#failed.error;
    let store: RunStore;
    try {
      store = RunStore.openSync(this.file, this.#options);
    } catch (error) {
      this.#failed = { state, error };
      throw error;
    }
    this.#failed = undefined;
    this.#store = store;
    // After the open: it makes the file when only the spool existed.
    this.#opened = { file: fileOf(this.file), version: store.schemaVersion() };
    return store;
  }

  #release(): void {
    const store = this.#store;
    this.#store = undefined;
    this.#opened = undefined;
    store?.close();
  }
}

/** The file a path names, its mode and owner (what decides how it is opened); undefined when there is none. */
function fileOf(file: string): string | undefined {
  try {
    const stats = statSync(file, { bigint: true });
    return `${stats.dev}:${stats.ino}:${stats.mode}:${stats.uid}`;
  } catch {
    return undefined;
  }
}

/** `fileOf` and its contents' size and time: a file repaired in place is another state. */
function stateOf(file: string): string | undefined {
  try {
    const stats = statSync(file, { bigint: true });
    return `${stats.dev}:${stats.ino}:${stats.mode}:${stats.uid}:${stats.size}:${stats.mtimeNs}`;
  } catch {
    return undefined;
  }
}
