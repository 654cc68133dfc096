/**
 * How many items may run at once: `--concurrency` at most, halved when the provider answers 429 (at most once per
 * `coolDownMs`, so that one burst of 429s does not drive it to 1), and grown back by one after each run of
 * `limit` successes without a 429 (additive increase, multiplicative decrease, as TCP does).
 */
export class AdaptiveConcurrency {
  readonly max: number;
  #limit: number;
  #successes = 0;
  #lastBackOff = -Infinity;
  readonly #coolDownMs: number;
  readonly #now: () => number;

  constructor(max: number, options: { coolDownMs?: number; now?: () => number } = {}) {
    this.max = max;
    this.#limit = max;
    this.#coolDownMs = options.coolDownMs ?? 1000;
    this.#now = options.now ?? Date.now;
  }

  get limit(): number {
    return this.#limit;
  }

  /** A 429. */
  backOff(): void {
    const now = this.#now();
    this.#successes = 0;
    if (now - this.#lastBackOff < this.#coolDownMs) return;
    this.#lastBackOff = now;
    this.#limit = Math.max(1, Math.floor(this.#limit / 2));
  }

  /** An item finished without being limited. */
  succeeded(): void {
    if (this.#limit >= this.max) return;
    this.#successes += 1;
    if (this.#successes >= this.#limit) {
      this.#successes = 0;
      this.#limit += 1;
    }
  }
}
