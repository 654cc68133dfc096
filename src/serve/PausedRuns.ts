import { InterruptedError } from "../errors.js";
import type { RunHandle } from "./RunHandle.js";

/**
 * The runs paused at their client's tool calls, by the calls' ids on the wire: the request that brings the results
 * names them. A run left waiting longer than `ttlMs` (`--pending-ttl`) is cancelled, and recorded as interrupted; so
 * is the one paused longest when more than `max` (`--max-paused`) would wait: each holds its dialog and perhaps tool
 * processes, and a paused run holds no place of `--concurrency`, so nothing else bounds how many clients leave behind.
 */
export class PausedRuns {
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #byCallId = new Map<string, RunHandle>();
  readonly #timers = new Map<RunHandle, { timer: NodeJS.Timeout; ids: string[] }>();
  /** The ids a run taken out was kept under, for `putBack`. */
  readonly #taken = new WeakMap<RunHandle, string[]>();

  constructor(options: { ttlMs: number; max?: number }) {
    // setTimeout fires at once for a delay past 2^31-1 ms (24.8 days): a longer wait is that long.
    this.#ttlMs = Math.min(options.ttlMs, 2 ** 31 - 1);
    this.#max = options.max ?? Number.POSITIVE_INFINITY;
  }

  /** How many runs wait. */
  get size(): number {
    return this.#timers.size;
  }

  has(id: string): boolean {
    return this.#byCallId.has(id);
  }

  /** Keep `run`, waiting for the results of `ids`. */
  add(run: RunHandle, ids: string[]): void {
    // The oldest first (a Map keeps the order runs were added in).
    for (const oldest of this.#timers.keys()) {
      if (this.#timers.size < this.#max) break;
      this.#remove(oldest);
      oldest.abort(new InterruptedError("interrupted", `more than ${this.#max} runs waited for their clients (--max-paused): this one, paused longest, was cancelled`));
    }
    for (const id of ids) this.#byCallId.set(id, run);
    const timer = setTimeout(() => {
      this.#remove(run);
      run.abort(new InterruptedError("interrupted", `the client's tool results did not come within ${Math.round(this.#ttlMs / 1000)} s (--pending-ttl)`));
    }, this.#ttlMs);
    timer.unref();
    this.#timers.set(run, { timer, ids });
  }

  /** The run waiting for the call `id`, taken out of the waiting (its other calls' ids with it). */
  take(id: string): RunHandle | undefined {
    const run = this.#byCallId.get(id);
    if (run) {
      this.#taken.set(run, this.#timers.get(run)?.ids ?? [id]);
      this.#remove(run);
    }
    return run;
  }

  /** Put a run taken by `take` back, as it was (the request that took it could not go on). */
  putBack(run: RunHandle): void {
    this.add(run, this.#taken.get(run) ?? run.waitingFor.map((call) => call.id));
  }

  /** Cancel every waiting run (the server stops). */
  abortAll(reason: unknown): void {
    for (const run of [...this.#timers.keys()]) {
      this.#remove(run);
      run.abort(reason);
    }
  }

  #remove(run: RunHandle): void {
    const entry = this.#timers.get(run);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.#timers.delete(run);
    for (const id of entry.ids) if (this.#byCallId.get(id) === run) this.#byCallId.delete(id);
  }
}
