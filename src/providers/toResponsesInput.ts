import type { ResponseInputItem } from "openai/resources/responses/responses";
import { dataUrl, imagesForModel } from "./imagesForModel.js";
import type { ModelMessage } from "./Model.js";

/** A conversation as the Responses API takes it: leading system messages as `instructions`, the rest as items. */
export interface ResponsesInput {
  instructions?: string;
  input: ResponseInputItem[];
}

/**
 * Map our chat-shaped messages to Responses input items: an assistant's tool calls become `function_call`
 * items and tool results `function_call_output` items, paired by `call_id`. System messages after the first
 * user message stay in place as system messages, so their position in the dialog is kept.
 */
export function toResponsesInput(messages: ModelMessage[]): ResponsesInput {
  const instructions: string[] = [];
  const input: ResponseInputItem[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
        if (input.length === 0) instructions.push(message.content);
        else input.push({ role: "system", content: message.content });
        break;
      case "user": {
        const images = imagesForModel(message);
        if (images.length === 0) input.push({ role: "user", content: message.content });
        else input.push({ role: "user", content: [...(message.content !== "" ? [{ type: "input_text" as const, text: message.content }] : []), ...images.map((image) => ({ type: "input_image" as const, image_url: dataUrl(image), detail: "auto" as const }))] });
        break;
      }
      case "assistant":
        if (message.content) input.push({ role: "assistant", content: message.content });
        for (const call of message.toolCalls ?? []) input.push({ type: "function_call", call_id: call.id, name: call.name, arguments: call.arguments });
        break;
      case "tool": {
        // An output may be a list of parts: the text, then the images (which the model sees).
        const images = imagesForModel(message);
        const output = images.length === 0 ? message.content : [{ type: "input_text" as const, text: message.content }, ...images.map((image) => ({ type: "input_image" as const, image_url: dataUrl(image) }))];
        input.push({ type: "function_call_output", call_id: message.toolCallId, output });
        break;
      }
    }
  }
  return { ...(instructions.length > 0 ? { instructions: instructions.join("\n\n") } : {}), input };
}
