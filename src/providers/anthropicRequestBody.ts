import type { ModelMessage, ModelRequest, ToolSchema } from "./Model.js";
import { imagesForModel } from "./imagesForModel.js";
import { toolArgumentsObject } from "./toolArgumentsObject.js";

/** Sent when neither `model_args.max_tokens` nor thinking says otherwise: the Messages API requires a value. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192;
/** The forced tool that carries a structured answer (Anthropic has no response-format field). */
export const ANTHROPIC_OUTPUT_TOOL = "final_answer";
/**
 * Below this many estimated tokens of system prompt and tools, no cache breakpoint is set by default: Anthropic
 * does not cache prefixes under 1024 tokens (2048 on Haiku), and a write costs 25% above the input price.
 */
const CACHE_MIN_TOKENS = 1024;

type Block = Record<string, unknown>;
interface AnthropicMessage {
  role: "user" | "assistant";
  content: Block[];
}

/** Options the caller passes besides the request: thinking blocks to send back with the tool calls they led to. */
export interface AnthropicBodyOptions {
  /** The thinking blocks that preceded a tool call, by tool-call id (Anthropic requires them back with the results). */
  thinkingFor?: (toolCallId: string) => Block[] | undefined;
}

/**
 * The Messages API body of a request. System messages become `system`; tool calls become `tool_use` blocks and
 * their results `tool_result` blocks (with `is_error` for a failed tool), all results of one round in one user
 * message, as parallel tool use requires. `model_args` pass through, except lllm's own keys: `cache` (true/false:
 * cache breakpoints on the tools and the system prompt; default on when they are long), `thinking`
 * (`{budget_tokens}`: extended thinking) and `max_tokens` (default 8192, above the thinking budget).
 */
export function anthropicRequestBody(model: string, request: ModelRequest, options: AnthropicBodyOptions = {}): Record<string, unknown> {
  const { model: _model, messages: _messages, stream: _stream, timeout: _timeout, system: _system, cache, thinking, max_tokens: maxTokens, stop, ...modelArgs } = request.modelArgs ?? {};
  // OpenAI's spelling, which tactics written for LLLM use.
  if (stop !== undefined && modelArgs["stop_sequences"] === undefined) modelArgs["stop_sequences"] = typeof stop === "string" ? [stop] : stop;
  const systemText = request.messages.filter((message) => message.role === "system").map((message) => message.content).join("\n\n");
  const tools: Block[] = (request.tools ?? []).map(toAnthropicTool);
  const format = request.responseFormat;
  let toolChoice: Block | undefined = request.tools && request.tools.length > 0 && request.toolChoice ? { type: request.toolChoice === "required" ? "any" : request.toolChoice } : undefined;
  if (format) {
    const schema = format.type === "json_schema" ? format.schema : { type: "object" };
    tools.push({ name: ANTHROPIC_OUTPUT_TOOL, description: "Give your final answer by calling this tool with it as the input.", input_schema: schema });
    // With other tools the model may still call them first; it must end with the answer tool. Extended thinking
    // allows no forced tool: the model is then asked, and an answer in text is parsed as JSON by the loop.
    const thinkingOn = thinking !== undefined && thinking !== null && thinking !== false;
    toolChoice = thinkingOn ? { type: "auto" } : tools.length > 1 ? { type: "any" } : { type: "tool", name: ANTHROPIC_OUTPUT_TOOL };
  }
  const cacheOn = cache === undefined ? estimateTokens(systemText, tools) >= CACHE_MIN_TOKENS : cache !== false;
  const body: Record<string, unknown> = { model, max_tokens: answerLimit(maxTokens ?? defaultMaxTokens(thinking), request.maxAnswerTokens) };
  if (systemText !== "") body["system"] = cacheOn ? [{ type: "text", text: systemText, cache_control: { type: "ephemeral" } }] : systemText;
  body["messages"] = toAnthropicMessages(request.messages, options);
  if (tools.length > 0) {
    // One breakpoint on the last tool caches all of them (tools come first in Anthropic's prompt order).
    if (cacheOn) tools[tools.length - 1] = { ...tools[tools.length - 1], cache_control: { type: "ephemeral" } };
    body["tools"] = tools;
    if (toolChoice) body["tool_choice"] = toolChoice;
  }
  if (thinking !== undefined && thinking !== null && thinking !== false) {
    const asked = toThinking(thinking);
    const fitted = request.maxAnswerTokens === undefined ? asked : fitThinking(asked, body["max_tokens"] as number);
    if (fitted) body["thinking"] = fitted;
  }
  return { ...body, ...modelArgs };
}

/** `max_tokens` lowered to the budget's cut (`ModelRequest.maxAnswerTokens`), when there is one. */
function answerLimit(value: unknown, cut: number | undefined): unknown {
  if (cut === undefined) return value;
  return typeof value === "number" ? Math.min(value, cut) : cut;
}

/** Anthropic's smallest thinking budget. */
const MIN_THINKING_TOKENS = 1024;

/**
 * Thinking that fits under the budget's cut `max_tokens`, which must exceed its budget: a budget the cut leaves no room
 * above is lowered to half of it (at least Anthropic's 1024), or, when even that does not fit, thinking is left off
 * for this call rather than sent as a request Anthropic refuses.
 */
function fitThinking(thinking: Record<string, unknown>, maxTokens: number): Record<string, unknown> | undefined {
  const budget = thinking["budget_tokens"];
  if (typeof budget !== "number" || budget < maxTokens) return thinking;
  const lowered = Math.max(MIN_THINKING_TOKENS, Math.floor(maxTokens / 2));
  return lowered < maxTokens ? { ...thinking, budget_tokens: lowered } : undefined;
}

function defaultMaxTokens(thinking: unknown): number {
  const budget = typeof thinking === "object" && thinking !== null ? Number((thinking as Record<string, unknown>)["budget_tokens"]) : NaN;
  return Number.isFinite(budget) ? budget + ANTHROPIC_DEFAULT_MAX_TOKENS : ANTHROPIC_DEFAULT_MAX_TOKENS;
}

/** `thinking: {budget_tokens: 2048}` (or Anthropic's full `{type: "enabled", budget_tokens}`), `thinking: true`. */
function toThinking(thinking: unknown): Record<string, unknown> {
  if (thinking === true) return { type: "enabled", budget_tokens: 2048 };
  if (typeof thinking === "object" && thinking !== null) return { type: "enabled", ...(thinking as Record<string, unknown>) };
  return { type: "enabled", budget_tokens: thinking };
}

function toAnthropicTool(tool: ToolSchema): Block {
  const { name, description, parameters } = tool.function;
  return { name, description, input_schema: parameters && Object.keys(parameters).length > 0 ? parameters : { type: "object", properties: {} } };
}

function estimateTokens(system: string, tools: Block[]): number {
  return Math.ceil((system.length + (tools.length > 0 ? JSON.stringify(tools).length : 0)) / 4);
}

/** Consecutive messages of one role merge into one (the API wants user and assistant turns to alternate). */
function toAnthropicMessages(messages: ModelMessage[], options: AnthropicBodyOptions): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  const push = (role: "user" | "assistant", blocks: Block[]): void => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case "system":
        break;
      case "user": {
        // A user's images follow the text (an empty text is left out beside images: the API refuses empty blocks).
        const images = imagesForModel(message);
        push("user", [...(message.content !== "" || images.length === 0 ? [{ type: "text", text: message.content }] : []), ...images.map((image) => ({ type: "image", source: { type: "base64", media_type: image.mimeType, data: image.data } }))]);
        break;
      }
      case "assistant": {
        const blocks: Block[] = [];
        const first = message.toolCalls?.[0];
        const thinking = first ? options.thinkingFor?.(first.id) : undefined;
        if (thinking) blocks.push(...thinking);
        if (message.content) blocks.push({ type: "text", text: message.content });
        for (const call of message.toolCalls ?? []) blocks.push({ type: "tool_use", id: call.id, name: call.name, input: toolArgumentsObject(call.arguments) });
        // An empty assistant turn is refused; a space keeps the alternation.
        push("assistant", blocks.length > 0 ? blocks : [{ type: "text", text: " " }]);
        break;
      }
      case "tool": {
        // A result with images is a list of blocks: the text, then the images.
        const images = imagesForModel(message);
        const content = images.length === 0 ? message.content : [{ type: "text", text: message.content }, ...images.map((image) => ({ type: "image", source: { type: "base64", media_type: image.mimeType, data: image.data } }))];
        push("user", [{ type: "tool_result", tool_use_id: message.toolCallId, content, ...(message.isError ? { is_error: true } : {}) }]);
        break;
      }
    }
  }
  return out;
}
