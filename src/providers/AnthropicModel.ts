import type Anthropic from "@anthropic-ai/sdk";
import type { Model, ModelRequest, ModelResponse } from "./Model.js";
import { DEFAULT_TIMEOUT_MS, modelFetch, type OpenAIModelOptions } from "./OpenAIEndpoint.js";
import { AnthropicDialog } from "./AnthropicDialog.js";
import { AnthropicStreamReader, readAnthropicMessage, type AnthropicAnswer } from "./readAnthropicAnswer.js";
import { requestWithRetries, retryContextFor, type Attempt } from "./requestWithRetries.js";
import { toOpenAIError, type ForeignSdkErrors } from "./toOpenAIError.js";
import { secrets } from "../util/redact.js";
import { CallerError, passText } from "./passText.js";

type AnthropicModule = typeof import("@anthropic-ai/sdk");
let anthropicModule: Promise<AnthropicModule> | undefined;

/** The Anthropic SDK, imported on the first call: OpenAI runs, `validate` and `--version` never load it. */
function loadAnthropic(): Promise<AnthropicModule> {
  anthropicModule ??= import("@anthropic-ai/sdk");
  return anthropicModule;
}

/** Sent when a server needs no key (a local proxy): the SDK insists on one. */
const NO_KEY = "no-key";

/**
 * A `Model` over Anthropic's Messages API (`anthropic/<model>`), through the official SDK. Retries, timeouts,
 * error messages and redaction are `requestWithRetries`', as for OpenAI: the SDK's errors are translated, and its
 * own retries are off. Streams when the request has `onText`.
 */
export class AnthropicModel implements Model {
  readonly name: string;
  private readonly options: OpenAIModelOptions;
  private client: Promise<Anthropic> | undefined;
  /** Extended thinking with tools: the thinking that led to a tool call must come back with its result. */
  private readonly dialog: AnthropicDialog;

  constructor(options: OpenAIModelOptions) {
    this.name = options.name;
    this.options = options;
    this.dialog = new AnthropicDialog(options.model ?? options.name);
    secrets.add(options.endpoint.apiKey);
  }

  /** The request body this model sends (what `--dry-run` prints). */
  requestBody(request: ModelRequest): Record<string, unknown> {
    return this.dialog.requestBody(request);
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const { options } = this;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.client ??= createAnthropicClient(options, timeoutMs);
    const client = await this.client;
    const sdk = await loadAnthropic();
    const errors: ForeignSdkErrors = { BaseError: sdk.AnthropicError, APIError: sdk.APIError, APIConnectionError: sdk.APIConnectionError, APIConnectionTimeoutError: sdk.APIConnectionTimeoutError, APIUserAbortError: sdk.APIUserAbortError };
    const context = retryContextFor({ modelName: this.name, options, timeoutMs, signal: request.signal });
    const body = this.requestBody(request);
    const structured = request.responseFormat !== undefined;
    const answer = await requestWithRetries(context, async (attempt) => {
      try {
        return await (request.onText ? streamMessage(client, body, attempt, structured, request.onText) : createMessage(client, body, attempt, structured));
      } catch (error) {
        if (error instanceof CallerError) throw error.original;
        throw await toOpenAIError(error, errors);
      }
    });
    return this.dialog.take(answer);
  }

  adopt(response: ModelResponse): void {
    this.dialog.adopt(response);
  }
}

/** Everything explicit, so that the SDK reads no `ANTHROPIC_*` variable behind the caller's `env`. */
async function createAnthropicClient(options: OpenAIModelOptions, timeoutMs: number): Promise<Anthropic> {
  const { default: AnthropicClient } = await loadAnthropic();
  return new AnthropicClient({
    apiKey: options.endpoint.apiKey ?? NO_KEY,
    authToken: null,
    baseURL: options.endpoint.baseURL,
    maxRetries: 0,
    timeout: timeoutMs,
    logLevel: "off",
    // The key must not follow a redirect to another host; the same transport as OpenAI's (proxies, size cap).
    fetch: modelFetch(options.transport),
  });
}

function requestOptions(attempt: Attempt): { signal: AbortSignal; maxRetries: 0 } {
  return { signal: attempt.signal, maxRetries: 0 };
}

async function createMessage(client: Anthropic, body: Record<string, unknown>, attempt: Attempt, structured: boolean): Promise<AnthropicAnswer> {
  const message: unknown = await client.messages.create({ ...body, stream: false } as unknown as Anthropic.MessageCreateParamsNonStreaming, requestOptions(attempt));
  return readAnthropicMessage(message, structured);
}

async function streamMessage(client: Anthropic, body: Record<string, unknown>, attempt: Attempt, structured: boolean, onText: (delta: string) => void): Promise<AnthropicAnswer> {
  const reader = new AnthropicStreamReader(structured);
  const stream = await client.messages.create({ ...body, stream: true } as unknown as Anthropic.MessageCreateParamsStreaming, requestOptions(attempt));
  const iterator = (stream as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    attempt.keepAlive();
    passText(reader.add(next.value), attempt, onText);
  }
  return reader.finish();
}
