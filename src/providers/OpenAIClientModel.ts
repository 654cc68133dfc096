import type OpenAI from "openai";
import type { Model, ModelRequest, ModelResponse } from "./Model.js";
import { createOpenAIClient, DEFAULT_TIMEOUT_MS, type OpenAIModelOptions } from "./OpenAIEndpoint.js";
import { retryContextFor, type RetryContext } from "./requestWithRetries.js";
import { secrets } from "../util/redact.js";

/**
 * What the chat-completions and Responses models share: the options, one lazily created SDK client (the SDK is
 * imported on the first call, so start-up stays fast), and the retry context of a request.
 */
export abstract class OpenAIClientModel implements Model {
  readonly name: string;
  protected readonly options: OpenAIModelOptions;
  private client: Promise<OpenAI> | undefined;

  constructor(options: OpenAIModelOptions) {
    this.name = options.name;
    this.options = options;
    // A server may echo the key in an error ("Incorrect API key provided: sk-…"): every text lllm prints omits it.
    secrets.add(options.endpoint.apiKey);
  }

  abstract generate(request: ModelRequest): Promise<ModelResponse>;

  /** The client and the retry context for one request. */
  protected async prepare(request: ModelRequest): Promise<{ client: OpenAI; context: RetryContext }> {
    const { options } = this;
    this.client ??= createOpenAIClient(options.endpoint, options.timeoutMs ?? DEFAULT_TIMEOUT_MS, options.transport);
    const context = this.retryContext(request);
    return { client: await this.client, context };
  }

  /** The retry context of one request. */
  protected retryContext(request: ModelRequest): RetryContext {
    const { options } = this;
    return retryContextFor({ modelName: this.name, options, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, signal: request.signal });
  }
}
