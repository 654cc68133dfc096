import { HttpError } from "./HttpError.js";
import { plural } from "../util/plural.js";

/**
 * At most `concurrency` runs at once; past that a request waits its turn, first come first served, in a line of at
 * most `maxWaiting`; past that it is refused at once (429 with `Retry-After`), so that a flood of requests costs the
 * server nothing but the answer. A request that goes away while it waits leaves the line.
 */
export class Admission {
  readonly concurrency: number;
  readonly maxWaiting: number;
  #running = 0;
  readonly #waiting: Array<{ admit: () => void; signal: AbortSignal | undefined; onAbort: () => void }> = [];

  constructor(options: { concurrency: number; maxWaiting: number }) {
    this.concurrency = options.concurrency;
    this.maxWaiting = options.maxWaiting;
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * A place to run, released by calling the function returned (once). Throws a 429 `HttpError` when the line is
   * full, and the signal's reason when it aborts while waiting.
   */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#running < this.concurrency && this.#waiting.length === 0) {
      this.#running++;
      return this.#releaser();
    }
    if (this.#waiting.length >= this.maxWaiting) {
      throw new HttpError(429, `the server is full: ${plural(this.#running, "run")} running and ${plural(this.#waiting.length, "request")} waiting, the most it takes (--concurrency ${this.concurrency}, --max-waiting ${this.maxWaiting}); retry later`, {
        code: "server_busy",
        headers: { "Retry-After": "1" },
      });
    }
    await new Promise<void>((resolve, reject) => {
      const entry = {
        admit: () => {
          signal?.removeEventListener("abort", entry.onAbort);
          resolve();
        },
        signal,
        onAbort: () => {
          const index = this.#waiting.indexOf(entry);
          if (index >= 0) this.#waiting.splice(index, 1);
          reject(signal?.reason);
        },
      };
      this.#waiting.push(entry);
      signal?.addEventListener("abort", entry.onAbort, { once: true });
    });
    return this.#releaser();
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      // The place passes to the next in line without being freed, so nobody can jump the line.
      if (next) next.admit();
      else this.#running--;
    };
  }
}
