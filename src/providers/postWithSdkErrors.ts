import { loadOpenAI } from "./OpenAIEndpoint.js";

/** A fetch as the model clients use it (`modelFetch`: proxies, the size cap, redirects within the origin). */
export type ModelFetch = (url: string, init: RequestInit) => Promise<Response>;

/** The error of an HTTP failure, from the response (its status and headers) and its body (parsed when it is JSON). */
export type StatusError = (response: Response, parsed: object | undefined, text: string, sdk: typeof import("openai")) => Error;

/**
 * POST as the `openai` SDK would, with its failures shaped as the SDK's errors, so that `requestWithRetries` (its
 * retries, timeouts, messages and redaction) treats a request sent here as one sent through the SDK: a connection
 * that fails is an `APIConnectionError`, an abort passes as is, and an HTTP failure is by default what the SDK makes
 * of it (`APIError.generate` with the parsed body, or the text when it is not JSON). The SDK is loaded for a failure
 * only: a request that succeeds never loads it (some 250 KB of code for a one-round `lllm run` to compile).
 */
export async function postWithSdkErrors(fetch: ModelFetch, url: string, init: RequestInit, statusError?: StatusError): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, method: "POST" });
  } catch (error) {
    if (error instanceof Error && error.name === "AbortError") throw error;
    const sdk = await loadOpenAI();
    throw new sdk.APIConnectionError({ message: "Connection error.", cause: error instanceof Error ? error : new Error(String(error)) });
  }
  if (response.ok) return response;
  const text = await response.text().catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
  let parsed: object | undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null) parsed = value;
  } catch {
    parsed = undefined;
  }
  const sdk = await loadOpenAI();
  throw statusError ? statusError(response, parsed, text, sdk) : sdk.APIError.generate(response.status, parsed, parsed ? undefined : text, response.headers);
}

/** A successful answer's body as the SDK reads it: parsed when its type is JSON (a `SyntaxError` when it is not valid), else the text. */
export async function readSdkBody(response: Response): Promise<unknown> {
  const mediaType = response.headers.get("content-type")?.split(";")[0]?.trim();
  const text = await response.text();
  return mediaType?.includes("application/json") || mediaType?.endsWith("+json") ? (JSON.parse(text) as unknown) : text;
}
