import type { ApiRequest } from "./ProxyDefinition.js";
import { ProxyCallError } from "./proxyError.js";
import { fetchWithinOrigin, RedirectRefused } from "../util/fetchWithinOrigin.js";
import { secrets } from "../util/redact.js";

export interface SendOptions {
  fetch: typeof globalThis.fetch;
  /** Aborts the request; when its reason is a `TimeoutError` the failure is reported as a timeout. */
  signal?: AbortSignal;
  timeoutMs: number;
  /** Names the call in messages: the path the agent called. */
  label: string;
  /** The API key: removed (in every encoding) from any text that comes back, so neither messages nor results carry it. */
  secret?: string;
}

/** At most this much of an error body goes into the message: enough to read the API's complaint. */
const BODY_LIMIT = 300;

/**
 * The most a call reads of an answer: the sandbox's bridge carries at most 64 MB in one message, so more could never
 * reach the code; reading on would only hold the whole body in lllm's memory (a runaway or hostile API can send
 * gigabytes, and V8 gives up on a string past 512 MB with a message that reads like a network failure).
 */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * Send one request the way Step 12 describes: GET puts `params` in the query string, POST sends them as a JSON body;
 * `query` (the key) goes in the query string either way. The answer is parsed as JSON, else returned as text. An
 * HTTP error status becomes a `proxy_http_error` naming the status and the start of the body.
 */
export async function sendRequest(request: ApiRequest, options: SendOptions): Promise<unknown> {
  const url = new URL(request.url);
  if (request.method === "GET") appendParams(url.searchParams, request.params);
  for (const [name, value] of Object.entries(request.query)) url.searchParams.append(name, value);
  const headers: Record<string, string> = { accept: "application/json, text/plain;q=0.9, */*;q=0.5", ...request.headers };
  let body: string | undefined;
  if (request.method === "POST") {
    body = JSON.stringify(request.params);
    headers["content-type"] = "application/json";
  }
  const redact = redactorFor(options.secret);
  let text: string;
  let response: Response;
  try {
    response = await fetchWithinApiOrigin(url, { method: request.method, headers, ...(body !== undefined ? { body } : {}) }, options);
    text = redact(await readLimited(response, options.label));
  } catch (error) {
    if (error instanceof ProxyCallError) throw error;
    if (options.signal?.aborted && isTimeout(options.signal.reason)) {
      throw new ProxyCallError("proxy_timeout", `${options.label} did not answer within ${formatSeconds(options.timeoutMs)}: try again, or ask for less data`, { cause: error });
    }
    const reason = redact(error instanceof Error ? describeNetworkError(error) : String(error));
    throw new ProxyCallError("proxy_network_error", `${options.label} could not be reached: ${reason}`, { cause: error });
  }
  if (!response.ok) {
    const excerpt = text.replace(/\s+/g, " ").trim();
    const shown = excerpt.length > BODY_LIMIT ? `${excerpt.slice(0, BODY_LIMIT)}…` : excerpt;
    const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
    throw new ProxyCallError("proxy_http_error", `${options.label} failed with ${status}${shown ? `: ${shown}` : ""}`, { status: response.status });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The body as text, refused once it passes `MAX_RESPONSE_BYTES` (from its Content-Length, else while it is read). */
async function readLimited(response: Response, label: string): Promise<string> {
  const tooLarge = (): ProxyCallError =>
    new ProxyCallError("proxy_response_too_large", `${label} answered more than ${MAX_RESPONSE_BYTES / 2 ** 20} MB, the most one call returns: ask for less data (a narrower range, fewer fields, one page at a time)`);
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > MAX_RESPONSE_BYTES) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!response.body) return "";
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  // As `response.text()` decodes: UTF-8, a byte-order mark dropped.
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** Lists repeat the name (`a=1&a=2`, as Python's requests sends them); dicts travel as JSON; null is left out. */
function appendParams(search: URLSearchParams, params: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined || item === null) continue;
      search.append(name, typeof item === "object" ? JSON.stringify(item) : String(item));
    }
  }
}

/** The process-wide redaction, with this request's key registered there (so everything printed later is covered). */
function redactorFor(secret: string | undefined): (text: string) => string {
  secrets.add(secret);
  return (text) => secrets.redact(text);
}

/** The request, with redirects followed only within the API's origin; a refused one is an error for the model. */
async function fetchWithinApiOrigin(url: URL, init: { method: string; headers: Record<string, string>; body?: string }, options: SendOptions): Promise<Response> {
  try {
    return await fetchWithinOrigin(options.fetch, url, { ...init, ...(options.signal ? { signal: options.signal } : {}) });
  } catch (error) {
    if (!(error instanceof RedirectRefused)) throw error;
    throw new ProxyCallError("proxy_redirect_refused", `${options.label}: ${error.message}. Call an endpoint of this API that answers directly`, { status: error.status, cause: error });
  }
}

function isTimeout(reason: unknown): boolean {
  return reason instanceof Error ? reason.name === "TimeoutError" : false;
}

/** undici says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND…) is in `cause`. */
function describeNetworkError(error: Error): string {
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const code = cause && "code" in cause ? String((cause as { code: unknown }).code) : undefined;
  return cause ? `${error.message} (${code ?? cause.message})` : error.message;
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}
