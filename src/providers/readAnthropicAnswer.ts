import { BadProviderAnswer } from "./BadProviderAnswer.js";
import type { ModelResponse, ToolCallRequest, Usage } from "./Model.js";
import { ANTHROPIC_OUTPUT_TOOL } from "./anthropicRequestBody.js";

type Block = Record<string, unknown>;

/** An answer of the Messages API, plus the thinking blocks that must go back with its tool calls. */
export interface AnthropicAnswer {
  response: ModelResponse;
  /** Thinking (and redacted thinking) blocks of the answer, in order. */
  thinking: Block[];
}

/**
 * A Messages API answer (`{content: [blocks], stop_reason, usage}`) as a `ModelResponse`. A call of the answer
 * tool (structured output) is the answer text; `max_tokens` with no usable content is an incomplete answer.
 */
export function readAnthropicMessage(message: unknown, structured: boolean): AnthropicAnswer {
  if (typeof message !== "object" || message === null || !Array.isArray((message as Block)["content"])) {
    throw new BadProviderAnswer("bad_response", "the answer has no `content` list (not a Messages API answer)", { retryable: true });
  }
  const body = message as Block;
  return toAnswer(body["content"] as Block[], body["stop_reason"], readUsage(body["usage"]), structured);
}

function toAnswer(blocks: Block[], stopReason: unknown, usage: Usage, structured: boolean): AnthropicAnswer {
  let text = "";
  const toolCalls: ToolCallRequest[] = [];
  const thinking: Block[] = [];
  let output: string | undefined;
  for (const block of blocks) {
    if (block["type"] === "text" && typeof block["text"] === "string") text += block["text"];
    else if (block["type"] === "thinking" || block["type"] === "redacted_thinking") thinking.push(block);
    else if (block["type"] === "tool_use") {
      const input = typeof block["input"] === "string" ? block["input"] : JSON.stringify(block["input"] ?? {});
      if (structured && block["name"] === ANTHROPIC_OUTPUT_TOOL) output = input;
      else toolCalls.push({ id: String(block["id"] ?? ""), name: String(block["name"] ?? ""), arguments: input });
    }
  }
  // Every answer says why it stopped; one that does not may be cut off, and its text taken for a whole answer.
  if (typeof stopReason !== "string") throw new BadProviderAnswer("incomplete", `the answer has no stop_reason (${stopReason === null ? "null" : "missing"}): it may be cut off`, { retryable: true });
  const finishReason = FINISH_REASONS[stopReason] ?? stopReason;
  if (output !== undefined) return { response: { message: { role: "assistant", content: output }, toolCalls: [], usage, finishReason: finishReason === "tool_calls" ? "stop" : finishReason }, thinking };
  // A refusal is an answer withheld, with or without text: not retried, failed by the loop (`answer_filtered`), as
  // OpenAI's `refusal` and Gemini's `SAFETY` are.
  if (stopReason === "refusal") return { response: { message: { role: "assistant", content: text === "" ? null : text }, toolCalls: [], usage, finishReason: "content_filter", ...(text.trim() !== "" ? { refusal: text } : {}) }, thinking };
  // Cut off before any text (thinking spent the room): the loop fails it as a cut answer (exit 3), as with some text.
  if (text === "" && toolCalls.length === 0 && finishReason !== "length") {
    throw new BadProviderAnswer("incomplete", `the answer has no text and no tool calls (stop_reason ${stopReason})`, { retryable: true });
  }
  return { response: { message: { role: "assistant", content: text === "" ? null : text }, toolCalls, usage, finishReason }, thinking };
}

/**
 * Anthropic's stop reasons in the words every model uses (OpenAI's `finish_reason`): the loop fails a final answer
 * cut at the token limit (`length`, exit 3) or withheld (`content_filter`) whatever the provider.
 */
const FINISH_REASONS: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  refusal: "content_filter",
};

/** Anthropic's `input_tokens` leaves out the cached part; lllm's `promptTokens` counts every prompt token. */
export function readUsage(raw: unknown): Usage {
  const usage = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const count = (key: string): number => (typeof usage[key] === "number" ? (usage[key] as number) : 0);
  const read = count("cache_read_input_tokens");
  const write = count("cache_creation_input_tokens");
  const result: Usage = { promptTokens: count("input_tokens") + read + write, completionTokens: count("output_tokens") };
  if (read > 0) result.cachedPromptTokens = read;
  if (write > 0) result.cacheWritePromptTokens = write;
  return result;
}

/**
 * Builds the answer from a stream of Messages API events (`message_start`, `content_block_start/delta/stop`,
 * `message_delta`, `message_stop`). Returns each piece of answer text as it comes; `finish` fails when the
 * stream ended before `message_stop`.
 */
export class AnthropicStreamReader {
  private readonly blocks: Block[] = [];
  private readonly partialJson = new Map<number, string>();
  private usage: Record<string, unknown> = {};
  private stopReason: unknown;
  private stopped = false;

  constructor(private readonly structured: boolean) {}

  /** Take one event; returns the answer text it adds ("" for none). */
  add(event: unknown): string {
    const data = (typeof event === "object" && event !== null ? event : {}) as Block;
    const index = typeof data["index"] === "number" ? data["index"] : -1;
    switch (data["type"]) {
      case "message_start": {
        const message = data["message"] as Block | undefined;
        this.usage = { ...((message?.["usage"] as Block | undefined) ?? {}) };
        return "";
      }
      case "content_block_start":
        this.blocks[index] = { ...((data["content_block"] as Block | undefined) ?? {}) };
        return "";
      case "content_block_delta": {
        const block = this.blocks[index];
        const delta = (data["delta"] ?? {}) as Block;
        if (!block) throw new BadProviderAnswer("bad_response", `a content_block_delta for block ${index}, which was never started`, { retryable: true });
        if (delta["type"] === "text_delta" && typeof delta["text"] === "string") {
          block["text"] = String(block["text"] ?? "") + delta["text"];
          return delta["text"];
        }
        if (delta["type"] === "input_json_delta") this.partialJson.set(index, (this.partialJson.get(index) ?? "") + String(delta["partial_json"] ?? ""));
        else if (delta["type"] === "thinking_delta") block["thinking"] = String(block["thinking"] ?? "") + String(delta["thinking"] ?? "");
        else if (delta["type"] === "signature_delta") block["signature"] = String(block["signature"] ?? "") + String(delta["signature"] ?? "");
        return "";
      }
      case "content_block_stop": {
        const block = this.blocks[index];
        const json = this.partialJson.get(index);
        // The raw text goes on as the arguments: bad JSON from the model goes back to the model, not to a crash.
        if (block && block["type"] === "tool_use") block["input"] = json === undefined || json === "" ? {} : json;
        return "";
      }
      case "message_delta": {
        const delta = (data["delta"] ?? {}) as Block;
        if (delta["stop_reason"] !== undefined) this.stopReason = delta["stop_reason"];
        // message_delta's usage is cumulative; its output_tokens is the final count.
        for (const [key, value] of Object.entries((data["usage"] as Block | undefined) ?? {})) if (value !== null && value !== undefined) this.usage[key] = value;
        return "";
      }
      case "message_stop":
        this.stopped = true;
        return "";
      default:
        return "";
    }
  }

  finish(): AnthropicAnswer {
    if (!this.stopped) throw new BadProviderAnswer("incomplete", "the streamed answer ended before it was complete (no message_stop event)", { retryable: true });
    return toAnswer(this.blocks.filter(Boolean), this.stopReason, readUsage(this.usage), this.structured);
  }
}
