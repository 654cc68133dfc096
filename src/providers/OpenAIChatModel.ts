import { OpenAIClientModel } from "./OpenAIClientModel.js";
import { assertProviderMcpSupported } from "../mcp/assertProviderMcpSupported.js";
import type OpenAI from "openai";
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParamsBase } from "openai/resources/chat/completions";
import type { ModelRequest, ModelResponse, ToolCallRequest, Usage } from "./Model.js";
import { requestWithRetries, type Attempt } from "./requestWithRetries.js";
import { toChatCompletionMessages } from "./toChatCompletionMessages.js";

/**
 * A `Model` over the OpenAI chat-completions API, which every OpenAI-compatible server (Ollama, vLLM, Groq,
 * OpenRouter, …) speaks. Streams when the request has `onText`; retries 429 / 5xx / connection failures itself.
 */
export class OpenAIChatModel extends OpenAIClientModel {
  async generate(request: ModelRequest): Promise<ModelResponse> {
    const { client, context } = await this.prepare(request);
    const body = chatRequestBody(context.wireModel, request);
    return requestWithRetries(context, (attempt) => (request.onText ? streamCompletion(client, body, attempt, request.onText) : completeOnce(client, body, attempt)));
  }
}

/**
 * The request body. `modelArgs` may override anything we set except the model, the messages and streaming,
 * which the model owns (streaming is decided by `onText`, and usage must be asked for to be counted).
 */
export function chatRequestBody(model: string, request: ModelRequest): ChatCompletionCreateParamsBase {
  const { model: _model, messages: _messages, stream: _stream, stream_options: _streamOptions, ...modelArgs } = request.modelArgs ?? {};
  const body: Record<string, unknown> = { model, messages: toChatCompletionMessages(request.messages) };
  // OpenAI rejects an empty tools list, and a tool_choice without tools.
  if (request.tools && request.tools.length > 0) {
    body["tools"] = request.tools;
    if (request.toolChoice) body["tool_choice"] = request.toolChoice;
  }
  if (request.hostedTools && request.hostedTools.length > 0) {
    // The same check as at load time, for library callers that bypass it.
    assertProviderMcpSupported("completion", { serverLabels: request.hostedTools.map((tool) => String((tool as { server_label?: unknown }).server_label ?? tool.type)) });
  }
  const format = request.responseFormat;
  if (format?.type === "json_schema") {
    body["response_format"] = { type: "json_schema", json_schema: { name: format.name, schema: format.schema, ...(format.strict === undefined ? {} : { strict: format.strict }) } };
  } else if (format?.type === "json_object") body["response_format"] = { type: "json_object" };
  return { ...body, ...modelArgs } as unknown as ChatCompletionCreateParamsBase;
}

function requestOptions(attempt: Attempt): { signal: AbortSignal; maxRetries: 0 } {
  return { signal: attempt.signal, maxRetries: 0 };
}

async function completeOnce(client: OpenAI, body: ChatCompletionCreateParamsBase, attempt: Attempt): Promise<ModelResponse> {
  const completion: ChatCompletion = await client.chat.completions.create({ ...body, stream: false }, requestOptions(attempt));
  const choice = completion.choices[0];
  const toolCalls: ToolCallRequest[] = [];
  for (const [index, call] of (choice?.message.tool_calls ?? []).entries()) {
    if (call.type !== "function") continue;
    // Some local servers leave the id out; the loop needs one to pair the result with the call.
    toolCalls.push({ id: call.id || `call_${index}`, name: call.function.name, arguments: call.function.arguments ?? "" });
  }
  return {
    message: { role: "assistant", content: choice?.message.content ?? null },
    toolCalls,
    usage: toUsage(completion.usage),
    ...(choice?.finish_reason ? { finishReason: choice.finish_reason } : {}),
  };
}

async function streamCompletion(client: OpenAI, body: ChatCompletionCreateParamsBase, attempt: Attempt, onText: (delta: string) => void): Promise<ModelResponse> {
  const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }, requestOptions(attempt));
  let text = "";
  let usage: Usage = { promptTokens: 0, completionTokens: 0 };
  let finishReason: string | undefined;
  // Tool calls arrive in pieces keyed by `index`: the id and name first, then the arguments a few characters at a time.
  const calls = new Map<number, ToolCallRequest>();
  for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
    attempt.keepAlive();
    // Usage comes in a final chunk with no choices, but some servers put it on the last content chunk.
    if (chunk.usage) usage = toUsage(chunk.usage);
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.finish_reason) finishReason = choice.finish_reason;
    const delta = choice.delta;
    if (delta.content) {
      text += delta.content;
      attempt.markDelivered();
      onText(delta.content);
    }
    for (const [position, piece] of (delta.tool_calls ?? []).entries()) {
      const index = piece.index ?? position;
      const call = calls.get(index) ?? { id: "", name: "", arguments: "" };
      if (piece.id && !call.id) call.id = piece.id;
      // Some servers repeat the name on every delta; it is never split, so the first one is kept.
      if (piece.function?.name && !call.name) call.name = piece.function.name;
      if (piece.function?.arguments) call.arguments += piece.function.arguments;
      calls.set(index, call);
    }
  }
  const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([index, call]) => ({ ...call, id: call.id || `call_${index}` }));
  return {
    message: { role: "assistant", content: text === "" ? null : text },
    toolCalls,
    usage,
    ...(finishReason ? { finishReason } : {}),
  };
}

function toUsage(usage: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null; completion_tokens_details?: { reasoning_tokens?: number } | null } | null | undefined): Usage {
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens;
  return { promptTokens: usage?.prompt_tokens ?? 0, completionTokens: usage?.completion_tokens ?? 0, ...(cached ? { cachedPromptTokens: cached } : {}), ...(reasoning ? { reasoningTokens: reasoning } : {}) };
}
