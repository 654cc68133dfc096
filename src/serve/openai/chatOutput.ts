import type { ServerResponse } from "node:http";
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionMessageToolCall } from "openai/resources/chat/completions";
import type { CompletionUsage } from "openai/resources/completions";
import type { ServedUsage } from "../answerText.js";
import type { HttpError } from "../HttpError.js";
import type { ClientCall } from "../ServedRun.js";

/** What every object of one answer shares. */
export interface ChatHead {
  id: string;
  created: number;
  model: string;
}

export function completionUsage(usage: ServedUsage): CompletionUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedPromptTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}

function toolCallsOf(calls: ClientCall[]): ChatCompletionMessageToolCall[] {
  return calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }));
}

/** A whole answer (`stream: false`): the text, or the client's tool calls the run waits for. */
export function chatCompletion(head: ChatHead, answer: { text: string; calls?: ClientCall[] }, usage: ServedUsage): ChatCompletion {
  const calls = answer.calls ?? [];
  return {
    id: head.id,
    object: "chat.completion",
    created: head.created,
    model: head.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: calls.length > 0 && answer.text === "" ? null : answer.text, refusal: null, ...(calls.length > 0 ? { tool_calls: toolCallsOf(calls) } : {}) },
        finish_reason: calls.length > 0 ? "tool_calls" : "stop",
        logprobs: null,
      },
    ],
    usage: completionUsage(usage),
  };
}

/**
 * An answer streamed as server-sent events: `chat.completion.chunk`s (the role first, then content deltas, the
 * client's tool calls, a last chunk with `finish_reason`, and with `include_usage` one with the usage), then
 * `data: [DONE]` (with `include_usage`, the other chunks carry `usage: null`, as OpenAI's do). Nothing is written once
 * the client is gone.
 */
export class ChatStream {
  readonly #response: ServerResponse;
  readonly #head: ChatHead;
  readonly #includeUsage: boolean;
  #opened = false;

  constructor(response: ServerResponse, head: ChatHead, includeUsage: boolean) {
    this.#response = response;
    this.#head = head;
    this.#includeUsage = includeUsage;
  }

  /** The headers and the first chunk (the assistant's role), once the request has a place to run. */
  open(): void {
    if (this.#opened) return;
    this.#opened = true;
    this.#response.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive", "X-Accel-Buffering": "no" });
    this.#chunk({ role: "assistant", content: "" }, null);
  }

  content(text: string): void {
    if (text !== "") this.#chunk({ content: text }, null);
  }

  /** The end: the client's tool calls (if the run waits for them), the finish reason, the usage, `[DONE]`. */
  finish(calls: ClientCall[], usage: ServedUsage): void {
    if (calls.length > 0) this.#chunk({ tool_calls: calls.map((call, index) => ({ index, id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } })) }, null);
    this.#chunk({}, calls.length > 0 ? "tool_calls" : "stop");
    if (this.#includeUsage) this.#write({ ...this.#base(), choices: [], usage: completionUsage(usage) });
    this.#end("data: [DONE]\n\n");
  }

  /** A failure after the stream began: an `error` event (the openai SDKs raise it), then the end. */
  fail(error: HttpError): void {
    this.#end(`data: ${JSON.stringify(error.toJSON())}\n\n`);
  }

  #base(): Omit<ChatCompletionChunk, "choices"> {
    return { id: this.#head.id, object: "chat.completion.chunk", created: this.#head.created, model: this.#head.model };
  }

  #chunk(delta: ChatCompletionChunk.Choice.Delta, finishReason: ChatCompletionChunk.Choice["finish_reason"]): void {
    // With include_usage, OpenAI gives every chunk a `usage` field, null until the last one: clients that read it
    // from each chunk (and tests of wire compatibility) expect it there.
    const chunk: ChatCompletionChunk = { ...this.#base(), choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }], ...(this.#includeUsage ? { usage: null } : {}) };
    this.#write(chunk);
  }

  #write(chunk: ChatCompletionChunk): void {
    if (!this.#response.destroyed && !this.#response.writableEnded) this.#response.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }

  #end(text: string): void {
    if (!this.#response.destroyed && !this.#response.writableEnded) this.#response.end(text);
  }
}
