import { OpenAIClientModel } from "./OpenAIClientModel.js";
import { assertProviderMcpSupported } from "./assertProviderMcpSupported.js";
import type { ChatCompletionCreateParamsBase } from "openai/resources/chat/completions";
import type { ModelRequest, ModelResponse } from "./Model.js";
import { BadProviderAnswer, classifyReadError } from "./BadProviderAnswer.js";
import { loadOpenAI, modelFetch, NO_KEY, type OpenAIModelOptions } from "./OpenAIEndpoint.js";
import { postWithSdkErrors, readSdkBody, type ModelFetch } from "./postWithSdkErrors.js";
import { ChatStreamReader, readChatCompletion } from "./readChatAnswer.js";
import { requestWithRetries, type Attempt } from "./requestWithRetries.js";
import { bodyChunks, serverSentEvents } from "./serverSentEvents.js";
import { CallerError, passText } from "./passText.js";
import { chatBodyText, toChatCompletionMessages } from "./toChatCompletionMessages.js";

/**
 * A `Model` over the OpenAI chat-completions API, which every OpenAI-compatible server (Ollama, vLLM, Groq,
 * OpenRouter, …) speaks. Streams when the request has `onText`; retries 429 / 5xx / connection failures itself.
 */
export class OpenAIChatModel extends OpenAIClientModel {
  #direct: DirectEndpoint | undefined;

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const body = chatRequestBody(this.options.model ?? this.options.name, request);
    // Asked for without the SDK: its request and answer layers (and, for a stream, Node's fetch and web streams)
    // cost a batch item or a served request more CPU than lllm's own bookkeeping. Sent and read as the SDK would,
    // with its errors (postWithSdkErrors, serverSentEvents).
    const context = this.retryContext(request);
    const direct = (this.#direct ??= directEndpoint(this.options));
    const onText = request.onText;
    if (onText) {
      const text = chatBodyText({ ...body, stream: true, stream_options: { include_usage: true } });
      return requestWithRetries(context, (attempt) => streamCompletion(direct, text, attempt, onText));
    }
    const text = chatBodyText({ ...body, stream: false });
    return requestWithRetries(context, (attempt) => completeOnce(direct, text, attempt));
  }
}

/** Where the whole-answer requests go, and the headers the SDK would send with them. */
interface DirectEndpoint {
  url: string;
  headers: Record<string, string>;
  fetch: ModelFetch;
}

function directEndpoint(options: OpenAIModelOptions): DirectEndpoint {
  const { endpoint } = options;
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${endpoint.apiKey ?? NO_KEY}` };
  if (endpoint.organization) headers["openai-organization"] = endpoint.organization;
  if (endpoint.project) headers["openai-project"] = endpoint.project;
  // The SDK's own joining of the base URL and the path (a trailing slash is not doubled).
  const url = `${endpoint.baseURL.replace(/\/$/, "")}/chat/completions`;
  return { url, headers, fetch: modelFetch(options.transport) };
}

/**
 * The request body. `modelArgs` may override anything we set except the model, the messages and streaming,
 * which the model owns (streaming is decided by `onText`, and usage must be asked for to be counted); `timeout` is
 * the client's setting (LiteLLM's spelling), never sent.
 */
export function chatRequestBody(model: string, request: ModelRequest): ChatCompletionCreateParamsBase {
  const { model: _model, messages: _messages, stream: _stream, stream_options: _streamOptions, timeout: _timeout, ...modelArgs } = request.modelArgs ?? {};
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
  const sent: Record<string, unknown> = { ...body, ...modelArgs };
  if (request.maxAnswerTokens !== undefined) {
    // The budget's cut lowers the limits the model_args set, in their spelling; without one, the field the model
    // takes: OpenAI's reasoning models refuse `max_tokens`, which every other compatible server knows.
    const keys = CHAT_ANSWER_LIMITS.filter((key) => typeof sent[key] === "number");
    if (keys.length === 0) keys.push(REASONING_MODEL.test(model) ? "max_completion_tokens" : "max_tokens");
    for (const key of keys) sent[key] = Math.min(typeof sent[key] === "number" ? sent[key] : Number.POSITIVE_INFINITY, request.maxAnswerTokens);
  }
  return sent as unknown as ChatCompletionCreateParamsBase;
}

/** The chat-completions fields that bound an answer's length. */
const CHAT_ANSWER_LIMITS = ["max_tokens", "max_completion_tokens"];
/** OpenAI's reasoning models (o1, o3, o4-mini, gpt-5…), which take `max_completion_tokens` only. */
const REASONING_MODEL = /^(openai\/)?(o\d|gpt-5)/;

async function completeOnce(direct: DirectEndpoint, body: string, attempt: Attempt): Promise<ModelResponse> {
  let completion: unknown;
  try {
    const response = await postWithSdkErrors(direct.fetch, direct.url, { headers: direct.headers, body, signal: attempt.signal });
    attempt.keepAlive();
    completion = await readSdkBody(response);
  } catch (error) {
    // The SDK (its error classes) only for a failure: a whole answer that comes as it should never loads it.
    throw classifyReadError(error, await loadOpenAI());
  }
  return readChatCompletion(completion);
}

/**
 * A streamed answer: each event's chunk to the reader as it comes, its text to `onText`. As the SDK's stream: a
 * `[DONE]` ends the answer (what follows is ignored), an event whose data holds an `error` is that API error, data
 * that is not JSON is a bad answer.
 */
async function streamCompletion(direct: DirectEndpoint, body: string, attempt: Attempt, onText: (delta: string) => void): Promise<ModelResponse> {
  const reader = new ChatStreamReader();
  try {
    const response = await postWithSdkErrors(direct.fetch, direct.url, { headers: direct.headers, body, signal: attempt.signal });
    const chunks = bodyChunks(response);
    if (chunks === undefined) throw new BadProviderAnswer("bad_response", "the streamed answer has no body", { retryable: true });
    let done = false;
    for await (const event of serverSentEvents(chunks)) {
      attempt.keepAlive();
      if (done) continue;
      if (event.data.startsWith("[DONE]")) {
        done = true;
        continue;
      }
      const chunk = JSON.parse(event.data) as { error?: unknown } | null;
      if (chunk?.error) {
        const sdk = await loadOpenAI();
        throw new sdk.APIError(undefined, chunk.error as object, undefined, response.headers);
      }
      passText(reader.add(chunk), attempt, onText);
    }
  } catch (error) {
    if (error instanceof CallerError) throw error.original;
    if (error instanceof BadProviderAnswer) throw error;
    // The SDK (its error classes) only for a failure: an answer that comes as it should never loads it.
    throw classifyReadError(error, await loadOpenAI());
  }
  return reader.finish();
}
