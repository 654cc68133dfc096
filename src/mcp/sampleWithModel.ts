import type { CreateMessageRequest, CreateMessageResult } from "@modelcontextprotocol/sdk/types.js";
import type { Model, ModelMessage, ModelResponse } from "../providers/Model.js";

/** Told around each sampling call, so that the run counts, records and prices it like any model call. */
export interface SamplingObserver {
  onCall?: (messages: ModelMessage[]) => void;
  onReply?: (response: ModelResponse, latencyMs: number) => void;
}

/**
 * A sampling hook that answers a server's `sampling/createMessage` with `model` (the agent's own): the server's
 * system prompt and messages become a chat request (text as it is; an image or audio block as a short
 * placeholder, since the chat format carries text), `maxTokens` (already capped by the config) and
 * `temperature` become request arguments, and the answer goes back as one text block naming the model.
 */
export function sampleWithModel(model: Model, options: { signal?: AbortSignal | undefined; observer?: SamplingObserver | undefined } = {}): (request: CreateMessageRequest["params"]) => Promise<CreateMessageResult> {
  return async (request) => {
    const messages: ModelMessage[] = [];
    if (request.systemPrompt) messages.push({ role: "system", content: request.systemPrompt });
    for (const message of request.messages) {
      const blocks = Array.isArray(message.content) ? message.content : [message.content];
      const text = blocks.map((block) => (block.type === "text" ? block.text : `[${block.type} content]`)).join("\n");
      messages.push(message.role === "assistant" ? { role: "assistant", content: text } : { role: "user", content: text });
    }
    options.observer?.onCall?.(messages);
    const started = performance.now();
    const response = await model.generate({
      messages,
      modelArgs: { max_tokens: request.maxTokens, ...(request.temperature !== undefined ? { temperature: request.temperature } : {}), ...(request.stopSequences ? { stop: request.stopSequences } : {}) },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    options.observer?.onReply?.(response, performance.now() - started);
    return {
      role: "assistant",
      content: { type: "text", text: response.message.content ?? "" },
      model: model.name,
      stopReason: response.finishReason === "length" ? "maxTokens" : "endTurn",
    };
  };
}
