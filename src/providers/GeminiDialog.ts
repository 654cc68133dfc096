import type { ModelRequest, ModelResponse } from "./Model.js";
import { geminiRequestBody } from "./geminiRequestBody.js";
import { GeminiAnswerReader, type GeminiAnswer } from "./readGeminiAnswer.js";

type Part = Record<string, unknown>;

/** Tool calls' original parts kept to send back (with their thought signatures). */
const PARTS_KEPT = 256;

/**
 * What one model's calls of `generateContent` carry from an answer to the next requests: each tool call's original
 * part (with its `thoughtSignature` and Gemini's call id, which the function response must name), and the ids lllm
 * makes up for calls Gemini sent without one, numbered across the whole dialog so that no two calls share one. The
 * live model and the batch path (`lllm batch --provider-batch`) both go through one of these, so they send the same.
 */
export class GeminiDialog {
  readonly #partsByCall = new Map<string, Part>();
  #calls = 0;

  /** The request body, with each earlier tool call as the part it came in. */
  requestBody(request: ModelRequest): Record<string, unknown> {
    return geminiRequestBody(request, { partFor: (id) => this.#partsByCall.get(id) });
  }

  /**
   * A reader of one answer (whole or streamed), naming calls without an id in this dialog's sequence; or, given a
   * `seed` (the request's name), `call_gemini_<seed>_<n>`: the same names whenever the same request is answered.
   */
  reader(seed?: string): GeminiAnswerReader {
    let made = 0;
    return new GeminiAnswerReader(seed === undefined ? () => `call_gemini_${(this.#calls += 1)}` : () => `call_gemini_${seed}_${(made += 1)}`);
  }

  /** Take an answer: its tool calls' parts are kept, and carried with its response (see `ProviderCarry`). */
  take(answer: GeminiAnswer): ModelResponse {
    for (const [id, part] of answer.parts) this.#partsByCall.set(id, part);
    this.#trim();
    if (answer.parts.size > 0) answer.response.carry = { gemini: Object.fromEntries(answer.parts) };
    return answer.response;
  }

  /**
   * An answer given elsewhere (a resumed run's recorded one): its calls' parts are kept, and the ids lllm made up go
   * on after its own, so that a new call is never named as an earlier one.
   */
  adopt(response: ModelResponse): void {
    for (const [id, part] of Object.entries(response.carry?.gemini ?? {})) this.#partsByCall.set(id, part);
    this.#trim();
    for (const call of response.toolCalls) {
      const made = /^call_gemini_(\d+)$/.exec(call.id);
      if (made) this.#calls = Math.max(this.#calls, Number(made[1]));
    }
  }

  #trim(): void {
    while (this.#partsByCall.size > PARTS_KEPT) this.#partsByCall.delete(this.#partsByCall.keys().next().value as string);
  }

  /**
   * A whole answer read and taken (what a batch job returns for a request). `seed`: see `reader`; a batch item run
   * again after a kill reads its answers in another order, and its journal finds each call by its id.
   */
  readReply(reply: unknown, seed?: string): ModelResponse {
    const reader = this.reader(seed);
    reader.add(reply);
    return this.take(reader.finish());
  }
}
