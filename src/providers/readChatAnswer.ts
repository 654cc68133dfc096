import { BadProviderAnswer } from "./BadProviderAnswer.js";
import type { ModelResponse, ToolCallRequest, Usage } from "./Model.js";

/**
 * Reading a chat-completions answer without trusting its shape: servers that call themselves OpenAI-compatible send
 * HTML error pages with status 200, `null` choices, numbers for text, tool calls without a name. Each becomes a
 * `BadProviderAnswer` that says what was wrong, instead of a TypeError deep in the loop or, worse, an empty answer
 * taken for a good one.
 */

/** A whole (not streamed) chat completion. */
export function readChatCompletion(value: unknown): ModelResponse {
  if (typeof value === "string") {
    // The SDK returns the text of a body that is not JSON: an HTML error page, a proxy's message.
    throw new BadProviderAnswer("bad_response", `the answer is not JSON but text: ${excerpt(value)}`, { retryable: true });
  }
  const completion = record(value, "the answer");
  const choices = completion["choices"];
  if (!Array.isArray(choices)) throw shape(`\`choices\` is ${describe(choices)}, not a list`);
  if (choices.length === 0) throw new BadProviderAnswer("incomplete", "the answer has an empty `choices` list: no reply at all", { retryable: true });
  const choice = record(choices[0], "choices[0]");
  const message = record(choice["message"], "choices[0].message");
  const content = message["content"];
  if (content !== undefined && content !== null && typeof content !== "string") throw shape(`choices[0].message.content is ${describe(content)}, not text`);
  const finishReason = optionalString(choice["finish_reason"], "choices[0].finish_reason");
  const rawCalls = message["tool_calls"];
  if (rawCalls !== undefined && rawCalls !== null && !Array.isArray(rawCalls)) throw shape(`choices[0].message.tool_calls is ${describe(rawCalls)}, not a list`);
  const toolCalls: ToolCallRequest[] = [];
  for (const [index, raw] of (rawCalls ?? []).entries()) {
    const where = `choices[0].message.tool_calls[${index}]`;
    const call = record(raw, where);
    if (call["type"] !== undefined && call["type"] !== "function") continue; // other kinds are not ours to run
    const fn = record(call["function"], `${where}.function`);
    const id = optionalString(call["id"], `${where}.id`);
    // Some local servers leave the id out; the loop needs one to pair the result with the call.
    toolCalls.push({ id: id || `call_${index}`, name: toolName(fn["name"], `${where}.function.name`), arguments: toolArguments(fn["arguments"], `${where}.function.arguments`) });
  }
  const text = typeof content === "string" ? content : null;
  const refusal = message["refusal"];
  if (typeof refusal === "string" && refusal.trim() !== "" && toolCalls.length === 0) return refused(refusal, readUsage(completion["usage"]));
  assertSomething(text, toolCalls, finishReason);
  // Every answer says why it stopped; one that does not may be cut off, and its text taken for a whole answer.
  if (!finishReason) throw new BadProviderAnswer("incomplete", `the answer has no finish_reason (${choice["finish_reason"] === null ? "null" : "missing"}): it may be cut off`, { retryable: true });
  return { message: { role: "assistant", content: text }, toolCalls, usage: readUsage(completion["usage"]), finishReason };
}

/** Collects a streamed chat completion chunk by chunk, checking each, and says whether it ended properly. */
export class ChatStreamReader {
  text = "";
  /** OpenAI's `refusal`, which comes in pieces as the text does. */
  refusal = "";
  usage: Usage = { promptTokens: 0, completionTokens: 0 };
  finishReason: string | undefined;
  /** Tool calls arrive in pieces keyed by `index`: the id and name first, then the arguments a few characters at a time. */
  private readonly calls = new Map<number, ToolCallRequest>();

  /** Take one chunk; returns its answer text (empty when it has none). */
  add(value: unknown): string {
    const chunk = record(value, "a streamed chunk");
    // Usage comes in a final chunk with no choices, but some servers put it on the last content chunk.
    if (chunk["usage"] !== undefined && chunk["usage"] !== null) this.usage = readUsage(chunk["usage"]);
    const choices = chunk["choices"];
    if (choices === undefined || choices === null) return "";
    if (!Array.isArray(choices)) throw shape(`a streamed chunk's \`choices\` is ${describe(choices)}, not a list`);
    if (choices.length === 0) return "";
    const choice = record(choices[0], "a streamed chunk's choices[0]");
    const finish = optionalString(choice["finish_reason"], "a streamed chunk's finish_reason");
    if (finish) this.finishReason = finish;
    if (choice["delta"] === undefined || choice["delta"] === null) return "";
    const delta = record(choice["delta"], "a streamed chunk's delta");
    const content = delta["content"];
    if (content !== undefined && content !== null && typeof content !== "string") throw shape(`a streamed chunk's content is ${describe(content)}, not text`);
    const pieces = delta["tool_calls"];
    if (pieces !== undefined && pieces !== null && !Array.isArray(pieces)) throw shape(`a streamed chunk's tool_calls is ${describe(pieces)}, not a list`);
    for (const [position, raw] of (pieces ?? []).entries()) {
      const piece = record(raw, "a streamed tool call");
      const index = typeof piece["index"] === "number" ? piece["index"] : position;
      const call = this.calls.get(index) ?? { id: "", name: "", arguments: "" };
      const fn = piece["function"] === undefined || piece["function"] === null ? {} : record(piece["function"], "a streamed tool call's function");
      const id = optionalString(piece["id"], "a streamed tool call's id");
      if (id && !call.id) call.id = id;
      // Some servers repeat the name on every delta; it is never split, so the first one is kept.
      const name = optionalString(fn["name"], "a streamed tool call's name");
      if (name && !call.name) call.name = name;
      const args = fn["arguments"];
      if (args !== undefined && args !== null) call.arguments += typeof args === "string" ? args : JSON.stringify(args);
      this.calls.set(index, call);
    }
    if (typeof delta["refusal"] === "string") this.refusal += delta["refusal"];
    if (typeof content === "string") this.text += content;
    return typeof content === "string" ? content : "";
  }

  /**
   * The whole reply, once the stream has ended. A stream that ended without a finish reason was cut off (the server
   * died, a proxy timed out, the body was JSON and no stream at all): its partial text is not an answer.
   */
  finish(): ModelResponse {
    const toolCalls = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([index, call]) => ({ ...call, id: call.id || `call_${index}` }));
    if (this.finishReason === undefined) {
      const got = this.text === "" && toolCalls.length === 0 ? "nothing" : `${this.text.length} characters${toolCalls.length > 0 ? ` and ${toolCalls.length} tool call(s)` : ""}`;
      throw new BadProviderAnswer("incomplete", `the streamed answer ended before it was complete (no finish_reason and no [DONE]; got ${got})`, { retryable: true });
    }
    for (const [index, call] of toolCalls.entries()) toolName(call.name, `streamed tool call #${index + 1}'s name`);
    if (this.refusal.trim() !== "" && toolCalls.length === 0) return refused(this.refusal, this.usage);
    const text = this.text === "" ? null : this.text;
    assertSomething(text, toolCalls, this.finishReason);
    return { message: { role: "assistant", content: text }, toolCalls, usage: this.usage, finishReason: this.finishReason };
  }
}

/**
 * The model refused (OpenAI's `refusal`, with `content` null): an answer, not a failure of the server, so it is not
 * retried (the same request is refused again) but withheld, as Anthropic's `stop_reason: refusal` and Gemini's
 * `SAFETY` are: the loop fails a run that ends on it (`answer_filtered`, exit 1).
 */
function refused(refusal: string, usage: Usage): ModelResponse {
  return { message: { role: "assistant", content: null }, toolCalls: [], usage, finishReason: "content_filter", refusal };
}

/**
 * An answer with neither text nor tool calls is no answer: it must not become an empty success. One cut off at the
 * output token limit before any text (a reasoning model that spent its room thinking) is returned as it is, for the
 * loop to fail as a cut answer (exit 3) as it does with a little text, rather than retried: it would be cut again.
 */
function assertSomething(text: string | null, toolCalls: ToolCallRequest[], finishReason: string | undefined): void {
  if (finishReason === "length") return;
  if ((text === null || text.trim() === "") && toolCalls.length === 0) {
    const why = finishReason && finishReason !== "stop" ? ` (finish_reason: ${finishReason})` : "";
    throw new BadProviderAnswer("incomplete", `the reply has no text and no tool calls${why}`, { retryable: true });
  }
}

function readUsage(value: unknown): Usage {
  const usage = value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
  const count = (field: unknown): number => (typeof field === "number" && Number.isFinite(field) && field >= 0 ? field : 0);
  const details = (field: unknown, key: string): number => (field !== null && typeof field === "object" ? count((field as Record<string, unknown>)[key]) : 0);
  // Cached and reasoning tokens are parts of the two counts, reported only by some providers (for cost).
  const cached = details(usage["prompt_tokens_details"], "cached_tokens");
  const reasoning = details(usage["completion_tokens_details"], "reasoning_tokens");
  return { promptTokens: count(usage["prompt_tokens"]), completionTokens: count(usage["completion_tokens"]), ...(cached ? { cachedPromptTokens: cached } : {}), ...(reasoning ? { reasoningTokens: reasoning } : {}) };
}

function toolName(value: unknown, where: string): string {
  if (typeof value !== "string" || value.trim() === "") throw shape(`${where} is ${describe(value)}: a tool call needs the tool's name`);
  return value;
}

function toolArguments(value: unknown, where: string): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  // A few servers send the arguments as an object rather than JSON text; it means the same.
  if (typeof value === "object") return JSON.stringify(value);
  throw shape(`${where} is ${describe(value)}, not JSON text`);
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw shape(`${what} is ${describe(value)}, not an object`);
  return value as Record<string, unknown>;
}

function optionalString(value: unknown, what: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw shape(`${what} is ${describe(value)}, not text`);
  return value;
}

/** Wrong types are the server's bug: sending the same request again gets the same answer. */
function shape(detail: string): BadProviderAnswer {
  return new BadProviderAnswer("bad_response", `the answer does not have the chat-completions shape: ${detail}`, { retryable: false });
}

function describe(value: unknown): string {
  if (value === undefined) return "missing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return typeof value === "object" ? "an object" : `the ${typeof value} ${String(value)}`;
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat === "") return "(an empty body)";
  return JSON.stringify(flat.length > 120 ? `${flat.slice(0, 120)}…` : flat);
}
