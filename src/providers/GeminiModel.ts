import type { Model, ModelRequest, ModelResponse } from "./Model.js";
import { BadProviderAnswer, classifyReadError } from "./BadProviderAnswer.js";
import { DEFAULT_TIMEOUT_MS, loadOpenAI, modelFetch, type OpenAIModelOptions } from "./OpenAIEndpoint.js";
import { GeminiDialog } from "./GeminiDialog.js";
import type { GeminiAnswerReader } from "./readGeminiAnswer.js";
import { requestWithRetries, retryContextFor, type Attempt } from "./requestWithRetries.js";
import { secrets } from "../util/redact.js";
import { postWithSdkErrors, type ModelFetch } from "./postWithSdkErrors.js";
import { bodyChunks } from "./serverSentEvents.js";

/**
 * A `Model` over Gemini's `generateContent` REST API (`gemini/<model>`). It speaks HTTP itself rather than through
 * `@google/genai`: that SDK calls the global `fetch` with no way to pass another, so its `x-goog-api-key` header
 * would follow a redirect to any host, and its errors drop the response headers (`retry-after`). Failures are
 * shaped as the `openai` SDK's errors, so retries, timeouts, messages and redaction are `requestWithRetries`'.
 */
export class GeminiModel implements Model {
  readonly name: string;
  private readonly options: OpenAIModelOptions;
  /** Tool calls' parts (thought signatures, Gemini's call ids) to send back, and the ids lllm made up. */
  private readonly dialog = new GeminiDialog();
  /** The same transport as the SDK clients' (proxies, size cap); redirects within the origin only. */
  private readonly fetch: ModelFetch;

  constructor(options: OpenAIModelOptions) {
    this.name = options.name;
    this.options = options;
    this.fetch = modelFetch(options.transport);
    secrets.add(options.endpoint.apiKey);
  }

  /** The request body this model sends (what `--dry-run` prints). */
  requestBody(request: ModelRequest): Record<string, unknown> {
    return this.dialog.requestBody(request);
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const { options } = this;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const wireModel = options.model ?? options.name;
    const context = retryContextFor({ modelName: this.name, options, timeoutMs, signal: request.signal });
    // Converting the schemas may fail (a ConfigError): before any request.
    const body = JSON.stringify(this.requestBody(request));
    const stream = request.onText !== undefined;
    const url = `${options.endpoint.baseURL}/v1beta/models/${encodeURIComponent(wireModel)}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (options.endpoint.apiKey !== undefined) headers["x-goog-api-key"] = options.endpoint.apiKey;
    const answer = await requestWithRetries(context, async (attempt) => {
      const reader = this.dialog.reader();
      const response = await send(this.fetch, url, { method: "POST", headers, body, signal: attempt.signal });
      attempt.keepAlive();
      if (stream) await readStream(response, reader, attempt, request.onText!);
      else reader.add(await readJson(response));
      return reader.finish();
    });
    return this.dialog.take(answer);
  }

  adopt(response: ModelResponse): void {
    this.dialog.adopt(response);
  }
}

/** POST, with HTTP failures and connection errors as the `openai` SDK's errors; Gemini's wait in the body becomes `retry-after`. */
async function send(fetch: ModelFetch, url: string, init: RequestInit): Promise<Response> {
  return postWithSdkErrors(fetch, url, init, (response, parsed, text, sdk) => {
    const body = parsed ?? { error: { message: text.slice(0, 500) || response.statusText } };
    const headers = new Headers(response.headers);
    const retryDelay = retryInfoSeconds(body);
    if (!headers.has("retry-after") && retryDelay !== undefined) headers.set("retry-after", String(retryDelay));
    const error = (body as { error?: { message?: unknown } }).error;
    return sdk.APIError.generate(response.status, body, typeof error?.message === "string" ? error.message : undefined, headers);
  });
}

/** Gemini says how long to wait in the body: `details: [{"@type": "…RetryInfo", retryDelay: "30s"}]`. */
function retryInfoSeconds(body: unknown): number | undefined {
  const details = (body as { error?: { details?: unknown } } | undefined)?.error?.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details as Array<Record<string, unknown>>) {
    const delay = detail["retryDelay"];
    if (typeof delay === "string" && /^\d+(\.\d+)?s$/.test(delay)) return Math.ceil(Number(delay.slice(0, -1)));
  }
  return undefined;
}

async function readJson(response: Response): Promise<unknown> {
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw classifyReadError(error, await loadOpenAI());
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new BadProviderAnswer("bad_response", `the body is not valid JSON (empty, truncated or garbled): ${(error as Error).message}`, { retryable: true, cause: error });
  }
}

/** Server-sent events, one JSON answer chunk per `data:` line. */
async function readStream(response: Response, reader: GeminiAnswerReader, attempt: Attempt, onText: (delta: string) => void): Promise<void> {
  const chunks = bodyChunks(response);
  if (!chunks) throw new BadProviderAnswer("bad_response", "the streamed answer has no body", { retryable: true });
  const decoder = new TextDecoder();
  let buffer = "";
  const take = (line: string): void => {
    if (!line.startsWith("data:")) return;
    let chunk: unknown;
    try {
      chunk = JSON.parse(line.slice(5).trim());
    } catch (error) {
      throw new BadProviderAnswer("bad_response", `a streamed chunk is not valid JSON: ${(error as Error).message}`, { retryable: true, cause: error });
    }
    const text = reader.add(chunk);
    if (text !== "") {
      attempt.markDelivered();
      onText(text);
    }
  };
  try {
    for await (const bytes of chunks) {
      attempt.keepAlive();
      buffer += decoder.decode(bytes, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, end).replace(/\r$/, "");
        buffer = buffer.slice(end + 1);
        take(line);
      }
    }
  } catch (error) {
    if (error instanceof BadProviderAnswer) throw error;
    // The SDK's error classes, for a failure only.
    throw classifyReadError(error, await loadOpenAI());
  }
  take(buffer);
}
