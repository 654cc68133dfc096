import { BadProviderAnswer } from "./BadProviderAnswer.js";
import type { ModelResponse, ToolCallRequest, Usage } from "./Model.js";

type Part = Record<string, unknown>;

/** An answer, plus each tool call's original part (it may carry a `thoughtSignature` that must go back). */
export interface GeminiAnswer {
  response: ModelResponse;
  parts: Map<string, Part>;
}

/** Gemini's `usageMetadata`: the prompt count includes the cached part; thoughts are billed as output. */
export function readGeminiUsage(raw: unknown): Usage {
  const usage = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const count = (key: string): number => (typeof usage[key] === "number" ? (usage[key] as number) : 0);
  const thoughts = count("thoughtsTokenCount");
  const result: Usage = { promptTokens: count("promptTokenCount") + count("toolUsePromptTokenCount"), completionTokens: count("candidatesTokenCount") + thoughts };
  if (count("cachedContentTokenCount") > 0) result.cachedPromptTokens = count("cachedContentTokenCount");
  if (thoughts > 0) result.reasoningTokens = thoughts;
  return result;
}

/**
 * Collects `generateContent` answers: one whole answer, or the chunks of `streamGenerateContent` (each a partial
 * answer whose text parts add up; function calls come whole; the last has `finishReason` and the usage).
 * `nextCallId` names calls Gemini sent without an id.
 */
export class GeminiAnswerReader {
  private text = "";
  private readonly toolCalls: ToolCallRequest[] = [];
  private readonly parts = new Map<string, Part>();
  private usage: unknown;
  private finishReason: string | undefined;
  private blockReason: string | undefined;

  constructor(private readonly nextCallId: () => string) {}

  /** Take one answer or chunk; returns the text it adds. */
  add(chunk: unknown): string {
    if (typeof chunk !== "object" || chunk === null) throw new BadProviderAnswer("bad_response", "an answer that is not a JSON object", { retryable: true });
    const data = chunk as Record<string, unknown>;
    if (data["usageMetadata"] !== undefined) this.usage = data["usageMetadata"];
    const feedback = data["promptFeedback"] as Record<string, unknown> | undefined;
    if (typeof feedback?.["blockReason"] === "string") this.blockReason = feedback["blockReason"];
    const candidate = (Array.isArray(data["candidates"]) ? data["candidates"][0] : undefined) as Record<string, unknown> | undefined;
    if (!candidate) return "";
    if (typeof candidate["finishReason"] === "string") this.finishReason = candidate["finishReason"];
    const content = candidate["content"] as { parts?: unknown } | undefined;
    let added = "";
    for (const part of Array.isArray(content?.parts) ? (content.parts as Part[]) : []) {
      if (part["thought"] === true) continue;
      if (typeof part["text"] === "string") added += part["text"];
      const call = part["functionCall"] as { name?: unknown; args?: unknown; id?: unknown } | undefined;
      if (call) {
        const id = typeof call.id === "string" && call.id !== "" ? call.id : this.nextCallId();
        this.toolCalls.push({ id, name: String(call.name ?? ""), arguments: JSON.stringify(call.args ?? {}) });
        this.parts.set(id, part);
      }
    }
    this.text += added;
    return added;
  }

  finish(): GeminiAnswer {
    const usage = readGeminiUsage(this.usage);
    // A blocked prompt or a withheld answer is not retried (it would be withheld again): the loop fails a run that
    // ends on it (`answer_filtered`), as Anthropic's and OpenAI's refusals.
    if (this.blockReason) return { response: { message: { role: "assistant", content: null }, toolCalls: [], usage, finishReason: "content_filter", refusal: `Gemini blocked the prompt (${this.blockReason})` }, parts: this.parts };
    if (this.finishReason === undefined) throw new BadProviderAnswer("incomplete", "the answer ended before it was complete (no finishReason)", { retryable: true });
    const finishReason = this.finishReason === "STOP" && this.toolCalls.length > 0 ? "tool_calls" : (FINISH_REASONS[this.finishReason] ?? this.finishReason);
    if (finishReason === "content_filter" && this.toolCalls.length === 0) return { response: { message: { role: "assistant", content: this.text === "" ? null : this.text }, toolCalls: [], usage, finishReason, refusal: `Gemini withheld the answer (finishReason ${this.finishReason})` }, parts: this.parts };
    // Cut off before any text (thinking spent the room): the loop fails it as a cut answer (exit 3), as with some text.
    if (this.text === "" && this.toolCalls.length === 0 && finishReason !== "length") {
      throw new BadProviderAnswer("incomplete", `the answer has no text and no tool calls (finishReason ${this.finishReason})`, { retryable: true });
    }
    const response: ModelResponse = { message: { role: "assistant", content: this.text === "" ? null : this.text }, toolCalls: this.toolCalls, usage, finishReason };
    return { response, parts: this.parts };
  }
}

/**
 * Gemini's finish reasons in the words every model uses (OpenAI's `finish_reason`): the loop fails a final answer
 * cut at the token limit (`length`, exit 3) or withheld (`content_filter`) whatever the provider.
 */
const FINISH_REASONS: Record<string, string> = {
  STOP: "stop",
  MAX_TOKENS: "length",
  SAFETY: "content_filter",
  RECITATION: "content_filter",
  BLOCKLIST: "content_filter",
  PROHIBITED_CONTENT: "content_filter",
  SPII: "content_filter",
  IMAGE_SAFETY: "content_filter",
};
