import type { APIError } from "openai";
import { loadOpenAI } from "./OpenAIEndpoint.js";
import { MAX_RETRY_AFTER_MS, parseRetryAfter, retryDelayMs } from "./RetryPolicy.js";
import type { RetryPolicy } from "./RetryPolicy.js";
import { connectionError, httpError, timeoutError } from "./toProviderError.js";
import type { FailedRequest } from "./toProviderError.js";

/** What one attempt gets from the retry loop. */
export interface Attempt {
  /** Aborts on the caller's signal or on the timeout; pass it to the SDK. */
  signal: AbortSignal;
  /** Restart the timeout: a streamed answer that keeps arriving is making progress, however long it takes. */
  keepAlive(): void;
  /** Answer text reached the caller: from now on a failure is not retried, since a retry would repeat it. */
  markDelivered(): void;
}

export interface RetryContext extends Omit<FailedRequest, "attempts"> {
  policy: RetryPolicy;
  timeoutMs: number;
  signal?: AbortSignal;
}

const RETRYABLE_STATUSES = new Set([408, 429]);

/**
 * Run `attempt` until it succeeds, retrying 429, 408, 5xx and connection failures with backoff (honouring the
 * server's `retry-after` and `x-should-retry`), and turn the final failure into a `ProviderError`. An abort of
 * the caller's signal stops at once, without retrying, and rejects with the signal's reason.
 */
export async function requestWithRetries<T>(context: RetryContext, attempt: (attempt: Attempt) => Promise<T>): Promise<T> {
  const sdk = await loadOpenAI();
  const { signal, policy } = context;
  for (let retry = 0; ; retry += 1) {
    signal?.throwIfAborted();
    const controller = new AbortController();
    let timedOut = false;
    let delivered = false;
    let timer: NodeJS.Timeout | undefined;
    const keepAlive = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, context.timeoutMs);
    };
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    keepAlive();
    try {
      return await attempt({ signal: controller.signal, keepAlive, markDelivered: () => (delivered = true) });
    } catch (error) {
      clearTimeout(timer);
      signal?.throwIfAborted();
      const failed: FailedRequest = { modelName: context.modelName, wireModel: context.wireModel, endpoint: context.endpoint, attempts: retry + 1 };
      if (timedOut || error instanceof sdk.APIConnectionTimeoutError) throw timeoutError(context.timeoutMs, failed, error);
      // Anything that is not the SDK's (a throwing onText, a bug) is not ours to translate.
      if (!(error instanceof sdk.APIError) || error instanceof sdk.APIUserAbortError) throw error;
      const isConnectionError = error instanceof sdk.APIConnectionError;
      const retryAfterMs = parseRetryAfter(error.headers);
      const canRetry = !delivered && retry < policy.maxRetries && (retryAfterMs === undefined || retryAfterMs <= MAX_RETRY_AFTER_MS);
      if (canRetry && (isConnectionError || isRetryable(error))) {
        await sleep(retryDelayMs(retry, policy, retryAfterMs), signal);
        continue;
      }
      if (retryAfterMs !== undefined && retryAfterMs > MAX_RETRY_AFTER_MS) failed.retryAfterMs = retryAfterMs;
      throw isConnectionError ? connectionError(error, failed) : httpError(error, failed);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }
}

function isRetryable(error: APIError): boolean {
  // OpenAI's own hint wins over our guess from the status.
  const hint = error.headers?.get("x-should-retry");
  if (hint === "true") return true;
  if (hint === "false") return false;
  const status = error.status;
  return status !== undefined && (RETRYABLE_STATUSES.has(status) || status >= 500);
}

/** Wait, but stop at once (rejecting with the abort reason) when the signal aborts. */
function sleep(milliseconds: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, milliseconds);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
