import { BadProviderAnswer, classifyReadError } from "./BadProviderAnswer.js";
import { loadOpenAI } from "./OpenAIEndpoint.js";

/** The error classes of a Stainless-generated SDK (Anthropic's has the same shape as OpenAI's). */
export interface ForeignSdkErrors {
  /** The SDK's base error class (`AnthropicError`). */
  BaseError: abstract new (...args: never[]) => Error;
  APIError: abstract new (...args: never[]) => Error;
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
  APIUserAbortError: abstract new (...args: never[]) => Error;
}

interface ForeignApiError extends Error {
  status?: number;
  error?: unknown;
  headers?: Headers;
}

/**
 * An error of another provider's SDK, as the `openai` SDK error that `requestWithRetries` classifies: HTTP
 * statuses (with the headers, so `retry-after` and `x-should-retry` count), connection failures (with their cause,
 * so a refused local port is final), timeouts and aborts. A garbled or broken answer becomes a `BadProviderAnswer`.
 * So every provider shares one retry policy, one set of messages and one redaction.
 */
export async function toOpenAIError(error: unknown, errors: ForeignSdkErrors): Promise<unknown> {
  const sdk = await loadOpenAI();
  if (error instanceof errors.APIUserAbortError) return new sdk.APIUserAbortError();
  if (error instanceof errors.APIConnectionTimeoutError) return new sdk.APIConnectionTimeoutError();
  if (error instanceof errors.APIConnectionError) return new sdk.APIConnectionError({ message: error.message, ...(error.cause instanceof Error ? { cause: error.cause } : {}) });
  if (error instanceof errors.APIError) {
    const { status, headers } = error as ForeignApiError;
    if (status === undefined || headers === undefined) return new BadProviderAnswer("bad_response", error.message, { retryable: true, cause: error });
    // Anthropic's body is `{type: "error", error: {type, message}}`, which is what `generate` looks into.
    return sdk.APIError.generate(status, (error as ForeignApiError).error as object | undefined, error.message, headers);
  }
  return classifyReadError(error, { APIError: errors.APIError, OpenAIError: errors.BaseError });
}
