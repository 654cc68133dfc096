import { statSync } from "node:fs";
import { RunStore, type RunStoreOptions } from "./RunStore.js";

/**
 * The run store of a long-lived process that looks things up in it now and then (a server reading back a response or
 * an A2A task it no longer holds in memory): opened at the first look-up and kept open. libsql's `close()` leaves a
 * connection's two files open until its statements are garbage-collected, so a server that opened and closed the store
 * for each look-up of an unknown id held ~500 more descriptors after 2,000 such requests (and grew to 229 MB where it
 * stays at 131 now): half the usual limit of 1,024 open files, which a client with the token could pass on purpose.
 *
 * The store is opened again when its file is another one (moved aside and made anew, as the run-log docs say to do
 * with a damaged log) or gone; each look-up still merges the spool first, as `RunStore` does on every read.
 */
export class HeldStore {
  readonly file: string;
  readonly #options: RunStoreOptions;
  #store: RunStore | undefined;
  /** The device and inode of the file the open store reads; undefined for an in-memory store (no file). */
  #identity: string | undefined;

  constructor(file: string, options: RunStoreOptions = {}) {
    this.file = file;
    this.#options = options;
  }

  /** `read` over the store; undefined when nothing was ever recorded (neither the log nor runs in its spool). */
  read<T>(read: (store: RunStore) => T): T | undefined {
    if (!RunStore.exists(this.file)) {
      this.close();
      return undefined;
    }
    if (this.#store === undefined || identityOf(this.file) !== this.#identity) {
      this.close();
      this.#store = RunStore.openSync(this.file, this.#options);
      // After the open: it makes the file when only the spool existed.
      this.#identity = identityOf(this.file);
    }
    return read(this.#store);
  }

  /** Close the store (the next `read` opens it again). */
  close(): void {
    const store = this.#store;
    this.#store = undefined;
    this.#identity = undefined;
    store?.close();
  }
}

function identityOf(file: string): string | undefined {
  try {
    const stats = statSync(file, { bigint: true });
    return `${stats.dev}:${stats.ino}`;
  } catch {
    return undefined;
  }
}
