import { abortableSleep as sleep } from "../util/abortableSleep.js";

export interface ProviderGateOptions {
  /** `--rpm`: model requests per minute, over the whole batch, per provider. */
  rpm?: number;
  /** `--tpm`: tokens (prompt + completion) per minute, per provider. */
  tpm?: number;
  now?: () => number;
}

interface ProviderState {
  pausedUntil: number;
  /** Start times of the requests of the last minute (for --rpm). */
  requests: number[];
  /** Tokens of the replies of the last minute, with their times (for --tpm). */
  tokens: Array<{ at: number; count: number }>;
  tokenSum: number;
}

const MINUTE_MS = 60_000;

/**
 * The one gate every model call of a batch passes before it is sent, per provider (its base URL). A 429 with a
 * `retry-after` pauses every new call to that provider, not just the item that got it: hundreds of items retrying
 * on their own would keep the limit hit. `--rpm` and `--tpm` are sliding one-minute windows.
 */
export class ProviderGate {
  readonly #options: ProviderGateOptions;
  readonly #providers = new Map<string, ProviderState>();
  readonly #now: () => number;

  constructor(options: ProviderGateOptions = {}) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  #state(provider: string): ProviderState {
    let state = this.#providers.get(provider);
    if (!state) this.#providers.set(provider, (state = { pausedUntil: 0, requests: [], tokens: [], tokenSum: 0 }));
    return state;
  }

  /** The provider said "slow down" for `waitMs`: hold every new call to it until then. */
  pause(provider: string, waitMs: number): void {
    const state = this.#state(provider);
    state.pausedUntil = Math.max(state.pausedUntil, this.#now() + waitMs);
  }

  /** Count the tokens of a reply (for --tpm). */
  addTokens(provider: string, count: number): void {
    if (this.#options.tpm === undefined || count <= 0) return;
    const state = this.#state(provider);
    state.tokens.push({ at: this.#now(), count });
    state.tokenSum += count;
  }

  /** Resolve when a call to `provider` may be sent (and count it); reject with the signal's reason on abort. */
  async pass(provider: string, signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const waitMs = this.#waitMs(this.#state(provider));
      if (waitMs <= 0) break;
      await sleep(waitMs, signal);
    }
    if (this.#options.rpm !== undefined) this.#state(provider).requests.push(this.#now());
  }

  /** How long before the next call may go; 0 when it may go now. */
  #waitMs(state: ProviderState): number {
    const now = this.#now();
    let wait = state.pausedUntil - now;
    const { rpm, tpm } = this.#options;
    if (rpm !== undefined) {
      while (state.requests.length > 0 && state.requests[0]! <= now - MINUTE_MS) state.requests.shift();
      if (state.requests.length >= rpm) wait = Math.max(wait, state.requests[0]! + MINUTE_MS - now);
    }
    if (tpm !== undefined) {
      while (state.tokens.length > 0 && state.tokens[0]!.at <= now - MINUTE_MS) state.tokenSum -= state.tokens.shift()!.count;
      if (state.tokenSum >= tpm && state.tokens.length > 0) wait = Math.max(wait, state.tokens[0]!.at + MINUTE_MS - now);
    }
    return wait;
  }
}

