import { modelFetch } from "../../providers/OpenAIEndpoint.js";
import type { HttpTransport } from "../../util/nodeHttpFetch.js";
import type { FileBody } from "../../util/FileBody.js";
import { secrets } from "../../util/redact.js";
import { BatchHttpError } from "./BatchApi.js";

export interface BatchHttpOptions {
  headers: Record<string, string>;
  transport?: HttpTransport;
}

/**
 * One call of a batch API over the model clients' fetch (the key never follows a redirect to another origin). A
 * failure is a `BatchHttpError` whose text is the provider's message, redacted.
 */
export async function batchHttp(options: BatchHttpOptions, url: string, init: { method?: string; body?: string | FileBody; headers?: Record<string, string>; signal?: AbortSignal | undefined } = {}): Promise<Response> {
  const send = modelFetch(options.transport);
  let response: Response;
  try {
    response = await send(url, { method: init.method ?? "GET", headers: { ...options.headers, ...init.headers }, ...(init.body !== undefined ? { body: init.body as RequestInit["body"] } : {}), ...(init.signal ? { signal: init.signal } : {}) });
  } catch (error) {
    if (init.signal?.aborted) throw error;
    throw new BatchHttpError(0, secrets.redact(`cannot reach ${new URL(url).origin}: ${error instanceof Error ? error.message : String(error)}`));
  }
  if (response.ok) return response;
  const text = await response.text().catch(() => "");
  let message = text.slice(0, 500);
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const inner = typeof parsed.error === "object" ? parsed.error?.message : parsed.error ?? parsed.message;
    if (typeof inner === "string") message = inner;
  } catch {
    // not JSON: the text itself
  }
  throw new BatchHttpError(response.status, secrets.redact(`${init.method ?? "GET"} ${new URL(url).pathname}: HTTP ${response.status}${message ? `: ${message}` : ""}`));
}

export async function batchJson(options: BatchHttpOptions, url: string, init: Parameters<typeof batchHttp>[2] = {}): Promise<Record<string, unknown>> {
  const response = await batchHttp(options, url, init);
  const value = (await response.json().catch(() => undefined)) as unknown;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new BatchHttpError(response.status, `${new URL(url).pathname}: the answer is not a JSON object`);
  return value as Record<string, unknown>;
}
