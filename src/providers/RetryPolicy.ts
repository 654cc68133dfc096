/** When and how long to wait before trying a failed model request again. */
export interface RetryPolicy {
  /** Retries after the first attempt; 0 turns retrying off. Default 4. */
  maxRetries: number;
  /** The first backoff delay; each retry doubles it. Default 500 ms. */
  baseDelayMs: number;
  /** The longest backoff delay (a server's `retry-after` is honoured up to `MAX_RETRY_AFTER_MS`). Default 30 s. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 30_000 };

/** A `retry-after` longer than this is not waited for: a quota that resets in minutes should fail the run
 * with the server's message instead of hanging it. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * The delay before retry number `retry` (0-based). A server's `retry-after` wins (it knows when the limit
 * resets); otherwise exponential backoff with "full jitter", so that many clients hitting the same limit do not
 * retry in lockstep.
 */
export function retryDelayMs(retry: number, policy: RetryPolicy, retryAfterMs?: number, random: () => number = Math.random): number {
  if (retryAfterMs !== undefined) return Math.max(0, retryAfterMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  // Half fixed, half random: never retries instantly, still spreads clients out.
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * The wait a server asked for, in ms: `retry-after-ms` (OpenAI's), else `retry-after` as seconds or as an HTTP
 * date. Undefined when absent or unreadable.
 */
export function parseRetryAfter(headers: { get(name: string): string | null } | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const milliseconds = headers.get("retry-after-ms");
  if (milliseconds !== null && milliseconds.trim() !== "" && Number.isFinite(Number(milliseconds))) return Number(milliseconds);
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") return undefined;
  if (Number.isFinite(Number(value))) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Said before each retry, so that a user watching a silent terminal knows why (`--verbose` prints each one). */
export interface RetryNotice {
  /** The configured model name. */
  model: string;
  /** The server's base URL. */
  baseURL: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** Attempts allowed in all (the first one and the retries). */
  maxAttempts: number;
  /** Why it failed, in a few words: `HTTP 500: The server is overloaded.`, `connection reset`. */
  cause: string;
  /** The HTTP status of the failed attempt, when the server answered (429: rate limited). */
  status?: number;
  /** How long the wait before the next attempt is. */
  waitMs: number;
  /** Time since the first attempt started. */
  elapsedMs: number;
}
