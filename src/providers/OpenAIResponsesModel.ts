import { OpenAIClientModel } from "./OpenAIClientModel.js";
import type { Response, ResponseCreateParamsNonStreaming } from "openai/resources/responses/responses";
import { ProviderError } from "../errors.js";
import type { ModelRequest, ModelResponse, ToolCallRequest } from "./Model.js";
import { requestWithRetries, type RetryContext } from "./requestWithRetries.js";
import { toResponsesInput } from "./toResponsesInput.js";

/**
 * A `Model` over OpenAI's Responses API (`api_type: response`), with the same retries, timeout and errors as
 * `OpenAIChatModel`. It does not stream: with `onText` set, the whole text is passed once at the end.
 */
export class OpenAIResponsesModel extends OpenAIClientModel {
  async generate(request: ModelRequest): Promise<ModelResponse> {
    const { client, context } = await this.prepare(request);
    const body = responsesRequestBody(context.wireModel, request);
    const response = await requestWithRetries(context, (attempt) => client.responses.create(body, { signal: attempt.signal, maxRetries: 0 }));
    const result = fromResponse(response, context);
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
  const { model: _model, input: _input, stream: _stream, ...modelArgs } = request.modelArgs ?? {};
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
  return { ...body, ...modelArgs, stream: false } as unknown as ResponseCreateParamsNonStreaming;
}

const INCOMPLETE_REASONS: Record<string, string> = { max_output_tokens: "length", content_filter: "content_filter" };

/** Text, tool calls and usage out of a response's output items. */
function fromResponse(response: Response, context: RetryContext): ModelResponse {
  if (response.status === "failed" && response.error) {
    throw new ProviderError("provider_http", `${context.endpoint.baseURL} failed the response for model \`${context.wireModel}\`: ${response.error.message} (${response.error.code})`);
  }
  let text = "";
  const toolCalls: ToolCallRequest[] = [];
  for (const item of response.output ?? []) {
    if (item.type === "message") {
      for (const part of item.content) if (part.type === "output_text") text += part.text;
    } else if (item.type === "function_call") {
      toolCalls.push({ id: item.call_id, name: item.name, arguments: item.arguments });
    }
  }
  const incomplete = response.status === "incomplete" ? (response.incomplete_details?.reason ?? "incomplete") : undefined;
  const finishReason = incomplete !== undefined ? (INCOMPLETE_REASONS[incomplete] ?? incomplete) : toolCalls.length > 0 ? "tool_calls" : "stop";
  return {
    message: { role: "assistant", content: text === "" && toolCalls.length > 0 ? null : text },
    toolCalls,
    usage: {
      promptTokens: response.usage?.input_tokens ?? 0,
      completionTokens: response.usage?.output_tokens ?? 0,
      ...(response.usage?.input_tokens_details?.cached_tokens ? { cachedPromptTokens: response.usage.input_tokens_details.cached_tokens } : {}),
      ...(response.usage?.output_tokens_details?.reasoning_tokens ? { reasoningTokens: response.usage.output_tokens_details.reasoning_tokens } : {}),
    },
    finishReason,
  };
}
