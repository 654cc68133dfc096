/**
 * The one small interface between the run loop and any model. Everything else (HTTP, retries, streaming, JSON
 * mode, provider quirks) lives behind it, so tests plug a scripted model in at this seam.
 */

/** A tool call as the model asked for it. `arguments` is the raw JSON text: the loop parses it, so that bad JSON
 * from the model goes back to the model instead of crashing the provider. */
export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: string;
}

/** Token counts of one model call. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens served from the provider's cache (part of `promptTokens`), when it reports them. */
  cachedPromptTokens?: number;
  /** Completion tokens spent on reasoning (part of `completionTokens`), when the provider reports them. */
  reasoningTokens?: number;
  /** Prompt tokens written to the provider's cache (part of `promptTokens`; Anthropic bills them above the input price). */
  cacheWritePromptTokens?: number;
  /** The call went through the provider's batch API (billed at the batch price). */
  batch?: boolean;
}

/** An image (or audio) a tool returned: base64 data and its MIME type, as MCP's content blocks carry them. */
export interface MediaAttachment {
  type: "image" | "audio";
  data: string;
  mimeType: string;
}

/** The chat message format sent to models (OpenAI chat-completions shape, which every compatible server takes). */
export type ModelMessage =
  | { role: "system"; content: string }
  | {
      role: "user";
      content: string;
      /** Images the user sent with the text (a served request's image parts), sent after it in each provider's form. */
      media?: MediaAttachment[];
    }
  | { role: "assistant"; content: string | null; toolCalls?: ToolCallRequest[] }
  | {
      role: "tool";
      content: string;
      toolCallId: string;
      name?: string;
      /** The tool failed: `content` is the error text (Anthropic's `is_error`). */
      isError?: boolean;
      /**
       * Images (and audio) of a rich result. Each provider sends the images it takes (see `imagesForModel`): inside
       * the tool result (Anthropic, the Responses API), or right after the round's results (chat completions,
       * Gemini); `content` notes every one of them in text either way.
       */
      media?: MediaAttachment[];
    };

/** A tool as offered to the model: the `to_tool()` JSON of a FunctionTool. */
export interface ToolSchema {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown>; strict?: boolean };
}

/** Ask for JSON: a schema (structured output) or any JSON object. */
export type ResponseFormat = { type: "json_schema"; name: string; schema: Record<string, unknown>; strict?: boolean } | { type: "json_object" };

/**
 * A tool the provider runs itself, sent as is: LLLM's `MCP(...)` declarations become `{"type": "mcp", …}` (seed
 * Step 9). Only the Responses API takes them.
 */
export type HostedTool = { readonly type: string };

export interface ModelRequest {
  messages: ModelMessage[];
  /** The name of the agent that asks: not sent to providers; a scripted replay answers each agent from its own turns. */
  agent?: string;
  /**
   * A tool's `ctx.sample` request that a resumed run's record may answer (it names its agent for that): `replay`,
   * asked again for a tool call the run replays, so that it counts what it cost the first time, is answered from the
   * record only, never by a model; `rerun`, asked by a call cut short that runs again, from the record when it holds
   * the answer, else by the model as any sample, naming no agent. Not sent to providers.
   */
  fromRecord?: "replay" | "rerun";
  tools?: ToolSchema[];
  /** Tools the provider calls itself (remote MCP servers); the loop never sees their calls. */
  hostedTools?: HostedTool[];
  /** Default `auto` when tools are given. `none` asks for text only. */
  toolChoice?: "auto" | "none" | "required";
  responseFormat?: ResponseFormat;
  /** Extra request fields passed through unchanged (`model_args`: temperature, max_tokens, …). */
  modelArgs?: Record<string, unknown>;
  /**
   * The most answer tokens the run's budget can pay for this request (`RunBudget.guardModel` sets it under a cost or
   * token limit). Each provider sends it in its own field (`max_tokens` or `max_completion_tokens`, Anthropic's
   * `max_tokens`, Gemini's `maxOutputTokens`, the Responses API's `max_output_tokens`), lowering any limit `modelArgs`
   * set; it never raises one.
   */
  maxAnswerTokens?: number;
  signal?: AbortSignal;
  /** When set, the provider streams and calls this with each piece of answer text as it arrives. */
  onText?: (delta: string) => void;
}

export interface ModelResponse {
  message: { role: "assistant"; content: string | null };
  toolCalls: ToolCallRequest[];
  usage: Usage;
  finishReason?: string;
  /**
   * The model's or the provider's reason for withholding the answer (OpenAI's `refusal`), when it gave one; such an
   * answer has `finishReason: "content_filter"`, whatever the provider called it.
   */
  refusal?: string;
  /** The model that answered, when it is not the one asked by name: a fallback chain says which of its models did. */
  model?: string;
  /**
   * What the provider's later requests must send back with this answer's tool calls (see `ProviderCarry`). Kept in
   * the run's record, so that a resumed run's live model sends it as the first attempt's would have.
   */
  carry?: ProviderCarry;
}

/**
 * A provider's own parts of an answer that its API wants back, unchanged, with the tool calls they led to: Gemini's
 * function-call parts, by call id (their `thoughtSignature`, Gemini's call id), and Anthropic's thinking blocks
 * (with their `signature`) before the answer's tool calls. JSON, kept with the answer in the run store.
 */
export interface ProviderCarry {
  gemini?: Record<string, Record<string, unknown>>;
  anthropic?: Array<Record<string, unknown>>;
}

export interface Model {
  /** The model name as configured, e.g. `gpt-4o-mini` or `ollama/llama3`. */
  readonly name: string;
  generate(request: ModelRequest): Promise<ModelResponse>;
  /**
   * An answer this model did not give itself, which its later requests follow (a resumed run's recorded answer, in
   * place of the call the first attempt made): keep what they must send back with it (its `carry`, and the call ids it
   * used), as `generate` keeps it of its own answers. `agent`: the agent it answered (a scripted model's list).
   */
  adopt?(response: ModelResponse, agent?: string): void;
}
