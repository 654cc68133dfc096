import type { APIError } from "openai";
import { loadOpenAI, type OpenAIModelOptions } from "./OpenAIEndpoint.js";
import { DEFAULT_RETRY_POLICY, MAX_RETRY_AFTER_MS, parseRetryAfter, retryDelayMs } from "./RetryPolicy.js";
import type { RetryNotice, RetryPolicy } from "./RetryPolicy.js";
import { BadProviderAnswer } from "./BadProviderAnswer.js";
import { badAnswerError, connectionError, httpError, serverMessage, timeoutError, tlsFailureOf } from "./toProviderError.js";
import { RedirectRefused } from "../util/fetchWithinOrigin.js";
import { replyTooLargeIn } from "../util/ReplyTooLarge.js";
import { ProxyFailed } from "../util/ProxyFailed.js";
import { secrets } from "../util/redact.js";
import type { FailedRequest } from "./toProviderError.js";
import { abortableSleep as sleep } from "../util/abortableSleep.js";

/** What one attempt gets from the retry loop. */
export interface Attempt {
  /** Aborts on the caller's signal or on the timeout; pass it to the SDK. */
  signal: AbortSignal;
  /** Restart the timeout: a streamed answer that keeps arriving is making progress, however long it takes. */
  keepAlive(): void;
  /** Answer text reached the caller: from now on a failure is not retried, since a retry would repeat it. */
  markDelivered(): void;
}

export type { RetryNotice } from "./RetryPolicy.js";

export interface RetryContext extends Omit<FailedRequest, "attempts"> {
  policy: RetryPolicy;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Called before each retry's wait. */
  onRetry?: (notice: RetryNotice) => void;
}

/** The retry context of one request: the model's own retry policy over the defaults, its timeout, the caller's signal. */
export function retryContextFor(model: {
  modelName: string;
  options: Pick<OpenAIModelOptions, "name" | "model" | "endpoint" | "retry" | "onRetry">;
  timeoutMs: number;
  signal: AbortSignal | undefined;
}): RetryContext {
  const { options } = model;
  return {
    modelName: model.modelName,
    wireModel: options.model ?? options.name,
    endpoint: options.endpoint,
    policy: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    timeoutMs: model.timeoutMs,
    ...(model.signal ? { signal: model.signal } : {}),
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  };
}

const RETRYABLE_STATUSES = new Set([408, 429]);
/** A request the server refused as such: sending it again gets the same answer, whatever the server hints. */
const NEVER_RETRIED_STATUSES = new Set([400, 401, 403, 404, 422]);
/** Error codes that mean "not now and not in a few seconds either" (an exhausted quota or billing). */
const FINAL_ERROR_CODES = new Set(["insufficient_quota", "billing_not_active", "billing_hard_limit_reached", "account_deactivated"]);

/**
 * Run `attempt` until it succeeds, retrying 429, 408, 5xx, connection failures and broken or garbled answers with
 * backoff (honouring the server's `retry-after` and `x-should-retry`), and turn the final failure into a
 * `ProviderError`. What cannot succeed is not retried: a refused connection to a server on this machine (nothing
 * listens there), an exhausted quota, 400/401/403/404. An abort of the caller's signal stops at once, without
 * retrying, and rejects with the signal's reason. Every error text is redacted of the keys in use.
 */
export async function requestWithRetries<T>(context: RetryContext, attempt: (attempt: Attempt) => Promise<T>): Promise<T> {
  try {
    return await attemptWithRetries(context, attempt);
  } catch (error) {
    // The server may have echoed the key ("Incorrect API key provided: sk-…"), in the message or in a cause.
    throw secrets.redactError(error);
  }
}

async function attemptWithRetries<T>(context: RetryContext, attempt: (attempt: Attempt) => Promise<T>): Promise<T> {
  const { signal, policy } = context;
  const started = Date.now();
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
    } catch (caught) {
      clearTimeout(timer);
      signal?.throwIfAborted();
      // The SDK's error classes, loaded at the first failure: a run whose requests all succeed never loads the SDK.
      const sdk = await loadOpenAI();
      // However an SDK wrapped it, an answer cut at the size cap is one: the same request would bring it again.
      const tooLarge = caught instanceof BadProviderAnswer && caught.kind === "too_large" ? undefined : replyTooLargeIn(caught);
      const error = tooLarge ? new BadProviderAnswer("too_large", tooLarge.message, { retryable: false, cause: caught }) : caught;
      const failed: FailedRequest = { modelName: context.modelName, wireModel: context.wireModel, endpoint: context.endpoint, attempts: retry + 1 };
      if (timedOut || error instanceof sdk.APIConnectionTimeoutError) throw timeoutError(context.timeoutMs, failed, error);
      const retryable = classify(error, sdk, context.endpoint.baseURL);
      // Anything that is neither the SDK's nor a bad answer (a throwing onText, a bug) is not ours to translate.
      if (retryable === undefined) throw error;
      const apiError = error instanceof sdk.APIError ? error : undefined;
      const retryAfterMs = apiError ? parseRetryAfter(apiError.headers) : undefined;
      const canRetry = !delivered && retry < policy.maxRetries && (retryAfterMs === undefined || retryAfterMs <= MAX_RETRY_AFTER_MS);
      if (canRetry && retryable) {
        const waitMs = retryDelayMs(retry, policy, retryAfterMs);
        context.onRetry?.({
          model: context.modelName,
          baseURL: context.endpoint.baseURL,
          attempt: retry + 1,
          maxAttempts: policy.maxRetries + 1,
          cause: secrets.redact(describeFailure(error, sdk)),
          ...(typeof apiError?.status === "number" ? { status: apiError.status } : {}),
          waitMs,
          elapsedMs: Date.now() - started,
        });
        await sleep(waitMs, signal);
        continue;
      }
      if (retryAfterMs !== undefined && retryAfterMs > MAX_RETRY_AFTER_MS) failed.retryAfterMs = retryAfterMs;
      if (error instanceof BadProviderAnswer) throw badAnswerError(error, failed, delivered);
      throw error instanceof sdk.APIConnectionError ? connectionError(error, failed) : httpError(error as APIError, failed);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }
}

type OpenAIModule = Awaited<ReturnType<typeof loadOpenAI>>;

/** true: worth another attempt; false: final; undefined: not a provider failure at all. */
function classify(error: unknown, sdk: OpenAIModule, baseURL: string): boolean | undefined {
  if (error instanceof BadProviderAnswer) return error.retryable;
  if (!(error instanceof sdk.APIError) || error instanceof sdk.APIUserAbortError) return undefined;
  if (error instanceof sdk.APIConnectionError) return !(refused(error) && isLoopback(baseURL)) && !redirectRefused(error) && tlsFailureOf(error) === undefined && !proxyRefusedForGood(error);
  return isRetryable(error);
}

/** A proxy that refused the tunnel with a 4xx (credentials, a host it forbids) refuses it again. */
function proxyRefusedForGood(error: Error): boolean {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    if (current instanceof ProxyFailed) return current.status !== undefined && current.status >= 400 && current.status < 500;
  }
  return false;
}

function isRetryable(error: APIError): boolean {
  const status = error.status;
  if (status !== undefined && NEVER_RETRIED_STATUSES.has(status)) return false;
  if (FINAL_ERROR_CODES.has(String(error.code ?? "")) || FINAL_ERROR_CODES.has(String(error.type ?? ""))) return false;
  // OpenAI's own hint wins over our guess from the status.
  const hint = error.headers?.get("x-should-retry");
  if (hint === "true") return true;
  if (hint === "false") return false;
  return status !== undefined && (RETRYABLE_STATUSES.has(status) || status >= 500);
}

/** A redirect to another host: the same request gets the same redirect. */
function redirectRefused(error: Error): boolean {
  for (let current: unknown = error; current instanceof Error; current = current.cause) if (current instanceof RedirectRefused) return true;
  return false;
}

/** ECONNREFUSED: nothing listens on that port. */
function refused(error: Error): boolean {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    if ((current as { code?: unknown }).code === "ECONNREFUSED") return true;
  }
  return false;
}

/** A server on this machine that refuses the connection is not running: waiting will not start it. A remote one
 * may be restarting behind its load balancer. */
function isLoopback(baseURL: string): boolean {
  let host: string;
  try {
    host = new URL(baseURL).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return false;
  }
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127\./.test(host) || host === "0.0.0.0";
}

/** A few words on why an attempt failed, for the retry notice. */
function describeFailure(error: unknown, sdk: OpenAIModule): string {
  if (error instanceof BadProviderAnswer) return error.message;
  if (error instanceof sdk.APIConnectionError) {
    let innermost: unknown = error;
    while (innermost instanceof Error && innermost.cause instanceof Error) innermost = innermost.cause;
    return `cannot connect${innermost instanceof Error && innermost !== error ? ` (${innermost.message})` : ""}`;
  }
  if (error instanceof sdk.APIError) {
    const text = serverMessage(error, { max: 100 });
    return `HTTP ${error.status ?? "error"}${text ? `: ${text}` : ""}`;
  }
  return String(error);
}

