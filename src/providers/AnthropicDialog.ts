import type { ModelRequest, ModelResponse } from "./Model.js";
import { anthropicRequestBody } from "./anthropicRequestBody.js";
import { readAnthropicMessage, type AnthropicAnswer } from "./readAnthropicAnswer.js";

type Block = Record<string, unknown>;

/** How many tool calls' thinking blocks are kept to send back (a run rarely has more rounds). */
const THINKING_KEPT = 256;

/**
 * What one model's calls of the Messages API carry from an answer to the next requests: extended thinking with
 * tools, where the thinking (and redacted thinking) blocks that led to a tool call must come back, unchanged with
 * their `signature`, with its result. The live model and the batch path (`lllm batch --provider-batch`) both build
 * their bodies and take their answers through one of these, so that the two send the same.
 */
export class AnthropicDialog {
  readonly #wireModel: string;
  readonly #thinkingByCall = new Map<string, Block[]>();

  constructor(wireModel: string) {
    this.#wireModel = wireModel;
  }

  /** The request body, with the thinking of earlier answers before the tool calls it led to. */
  requestBody(request: ModelRequest): Record<string, unknown> {
    return anthropicRequestBody(this.#wireModel, request, { thinkingFor: (id) => this.#thinkingByCall.get(id) });
  }

  /** Take an answer: its thinking is kept for its tool calls, and carried with its response (see `ProviderCarry`). */
  take(answer: AnthropicAnswer): ModelResponse {
    if (answer.thinking.length > 0 && answer.response.toolCalls.length > 0) {
      answer.response.carry = { anthropic: answer.thinking };
      this.adopt(answer.response);
    }
    return answer.response;
  }

  /** An answer given elsewhere (a resumed run's recorded one): its thinking is kept for its tool calls. */
  adopt(response: ModelResponse): void {
    const thinking = response.carry?.anthropic;
    if (!thinking || thinking.length === 0) return;
    for (const call of response.toolCalls) this.#thinkingByCall.set(call.id, thinking);
    while (this.#thinkingByCall.size > THINKING_KEPT) this.#thinkingByCall.delete(this.#thinkingByCall.keys().next().value as string);
  }

  /** A whole answer to `request` read and taken (what a batch job returns for a request). */
  readReply(reply: unknown, request: ModelRequest): ModelResponse {
    return this.take(readAnthropicMessage(reply, request.responseFormat !== undefined));
  }
}
