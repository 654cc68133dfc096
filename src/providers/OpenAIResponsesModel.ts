import { OpenAIClientModel } from "./OpenAIClientModel.js";
import type { Response, ResponseCreateParamsNonStreaming } from "openai/resources/responses/responses";
import { ProviderError } from "../errors.js";
import type { ModelRequest, ModelResponse, ToolCallRequest } from "./Model.js";
import { requestWithRetries, type RetryContext } from "./requestWithRetries.js";
import { BadProviderAnswer, classifyReadError } from "./BadProviderAnswer.js";
import { loadOpenAI } from "./OpenAIEndpoint.js";
import { toResponsesInput } from "./toResponsesInput.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";

/**
 * A `Model` over OpenAI's Responses API (`api_type: response`), with the same retries, timeout and errors as
 * `OpenAIChatModel`. It does not stream: with `onText` set, the whole text is passed once at the end.
 */
export class OpenAIResponsesModel extends OpenAIClientModel {
  async generate(request: ModelRequest): Promise<ModelResponse> {
    const { client, context } = await this.prepare(request);
    const body = responsesRequestBody(context.wireModel, request);
    // Read inside the attempt, so that a garbled or empty answer is retried like a failed request.
    const result = await requestWithRetries(context, async (attempt) => {
      const sdk = await loadOpenAI();
      let response: unknown;
      try {
        response = await client.responses.create(body, { signal: attempt.signal, maxRetries: 0 });
      } catch (error) {
        const classified = classifyReadError(error, sdk);
        // The SDK post-processes the body (output_text) and chokes with a TypeError on one that is not a response.
        if (classified instanceof TypeError) throw new BadProviderAnswer("bad_response", `the answer is not a Responses API object (${classified.message})`, { retryable: true, cause: error });
        throw classified;
      }
      return fromResponse(checkResponse(response), context);
    });
    if (request.onText && result.message.content) request.onText(result.message.content);
    return result;
  }
}

/**
 * The request body. `store: false` because every call sends the whole conversation (no `previous_response_id`),
 * so keeping responses on the server buys nothing; `model_args` can turn it back on, and may override anything
 * else except the model, the input and streaming.
 */
export function responsesRequestBody(model: string, request: ModelRequest): ResponseCreateParamsNonStreaming {
  const { model: _model, input: _input, stream: _stream, timeout: _timeout, ...modelArgs } = request.modelArgs ?? {};
  const body: Record<string, unknown> = { model, ...toResponsesInput(request.messages), store: false };
  if (request.tools && request.tools.length > 0) {
    // The Responses API makes tools strict by default; our schemas say when they qualify, so absent means false.
    body["tools"] = request.tools.map((tool) => ({
      type: "function",
      name: tool.function.name,
      description: tool.function.description,
      parameters: tool.function.parameters,
      strict: tool.function.strict ?? false,
    }));
    if (request.toolChoice) body["tool_choice"] = request.toolChoice;
  }
  if (request.hostedTools && request.hostedTools.length > 0) {
    body["tools"] = [...((body["tools"] as unknown[] | undefined) ?? []), ...request.hostedTools];
  }
  const format = request.responseFormat;
  if (format?.type === "json_schema") {
    body["text"] = { format: { type: "json_schema", name: format.name, schema: format.schema, ...(format.strict === undefined ? {} : { strict: format.strict }) } };
  } else if (format?.type === "json_object") body["text"] = { format: { type: "json_object" } };
  const sent: Record<string, unknown> = { ...body, ...modelArgs, stream: false };
  // The budget's cut: it lowers a limit the model_args set, never raises it.
  if (request.maxAnswerTokens !== undefined) sent["max_output_tokens"] = Math.min(typeof sent["max_output_tokens"] === "number" ? sent["max_output_tokens"] : Number.POSITIVE_INFINITY, request.maxAnswerTokens);
  return sent as unknown as ResponseCreateParamsNonStreaming;
}

/** The shape `fromResponse` relies on: an object whose `output` is a list of objects. */
function checkResponse(value: unknown): Response {
  if (typeof value === "string") {
    const flat = value.replace(/\s+/g, " ").trim();
    throw new BadProviderAnswer("bad_response", `the answer is not JSON but text: ${flat === "" ? "(an empty body)" : JSON.stringify(flat.slice(0, 120))}`, { retryable: true });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new BadProviderAnswer("bad_response", "the answer is not a JSON object", { retryable: true });
  const output = (value as { output?: unknown }).output;
  if (output !== undefined && output !== null && (!Array.isArray(output) || output.some((item) => item === null || typeof item !== "object"))) {
    throw new BadProviderAnswer("bad_response", "the answer does not have the Responses shape: `output` is not a list of items", { retryable: false });
  }
  return value as Response;
}

const INCOMPLETE_REASONS: Record<string, string> = { max_output_tokens: "length", content_filter: "content_filter" };

/** Text, tool calls and usage out of a response's output items. */
function fromResponse(response: Response, context: RetryContext): ModelResponse {
  if (response.status === "failed" && response.error) {
    // The server's words, on one line (as `serverMessage` quotes an HTTP error's): a line break in them would print a
    // line of the server's choosing on stderr that reads as lllm's own.
    const said = escapeControlCharacters(`${response.error.message} (${response.error.code})`, { all: true });
    throw new ProviderError("provider_http", `${context.endpoint.baseURL} failed the response for model \`${context.wireModel}\`: ${said}`);
  }
  let text = "";
  let refusal = "";
  const toolCalls: ToolCallRequest[] = [];
  for (const item of response.output ?? []) {
    if (item.type === "message") {
      for (const part of item.content ?? []) {
        if (part.type === "output_text" && typeof part.text === "string") text += part.text;
        else if (part.type === "refusal" && typeof part.refusal === "string") refusal += part.refusal;
      }
    } else if (item.type === "function_call") {
      if (typeof item.name !== "string" || item.name === "") throw new BadProviderAnswer("bad_response", "a function_call item has no name: a tool call needs the tool's name", { retryable: false });
      toolCalls.push({ id: item.call_id, name: item.name, arguments: typeof item.arguments === "string" ? item.arguments : JSON.stringify(item.arguments ?? {}) });
    }
  }
  const incomplete = response.status === "incomplete" ? (response.incomplete_details?.reason ?? "incomplete") : undefined;
  const usage = responsesUsage(response);
  // A refusal is an answer withheld, not a failure to retry (see readChatAnswer's `refused`).
  if (refusal.trim() !== "" && text.trim() === "" && toolCalls.length === 0) return { message: { role: "assistant", content: null }, toolCalls, usage, finishReason: "content_filter", refusal };
  const finishReason = incomplete !== undefined ? (INCOMPLETE_REASONS[incomplete] ?? incomplete) : toolCalls.length > 0 ? "tool_calls" : "stop";
  if (text.trim() === "" && toolCalls.length === 0) {
    // Cut off or withheld before any text: the loop fails it as such (exit 3, or answer_filtered); retried, it would be again.
    if (finishReason === "length" || finishReason === "content_filter") return { message: { role: "assistant", content: null }, toolCalls, usage, finishReason };
    throw new BadProviderAnswer("incomplete", `the reply has no text and no tool calls${incomplete ? ` (incomplete: ${incomplete})` : ""}`, { retryable: true });
  }
  return {
    message: { role: "assistant", content: text === "" && toolCalls.length > 0 ? null : text },
    toolCalls,
    usage,
    finishReason,
  };
}

function responsesUsage(response: Response): ModelResponse["usage"] {
  return {
    promptTokens: response.usage?.input_tokens ?? 0,
    completionTokens: response.usage?.output_tokens ?? 0,
    ...(response.usage?.input_tokens_details?.cached_tokens ? { cachedPromptTokens: response.usage.input_tokens_details.cached_tokens } : {}),
    ...(response.usage?.output_tokens_details?.reasoning_tokens ? { reasoningTokens: response.usage.output_tokens_details.reasoning_tokens } : {}),
  };
}
