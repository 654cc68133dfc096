import type { ServerResponse } from "node:http";
import type { Response, ResponseOutputItem, ResponseStreamEvent } from "openai/resources/responses/responses";
import { newWireId } from "../newWireId.js";
import type { ClientCall } from "../ServedRun.js";
import { functionCallItem, messageItem } from "./responseObjects.js";

/** `ResponseStreamEvent` without its `sequence_number`, which the stream adds. */
type Event = ResponseStreamEvent extends infer E ? (E extends { sequence_number: number } ? Omit<E, "sequence_number"> : never) : never;

/**
 * A response streamed as server-sent events, in the order clients expect: `response.created`,
 * `response.in_progress`, then for the answer's text a message item (`output_item.added`, `content_part.added`,
 * `output_text.delta`s, `output_text.done`, `content_part.done`, `output_item.done`) and for each client function
 * call an item with its arguments (`function_call_arguments.delta` and `.done`), then `response.completed` (or
 * `response.failed`); each event numbered (`sequence_number`). Nothing is written once the client is gone.
 */
export class ResponseStream {
  readonly #response: ServerResponse;
  #sequence = 0;
  /** The output items so far, complete. */
  readonly output: ResponseOutputItem[] = [];
  #message: { id: string; index: number; text: string } | undefined;

  constructor(response: ServerResponse) {
    this.#response = response;
  }

  open(created: Response): void {
    this.#response.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive", "X-Accel-Buffering": "no" });
    this.#send({ type: "response.created", response: created });
    this.#send({ type: "response.in_progress", response: created });
  }

  text(delta: string): void {
    if (delta === "") return;
    if (!this.#message) {
      const id = newWireId("msg_");
      this.#message = { id, index: this.output.length, text: "" };
      this.#send({ type: "response.output_item.added", output_index: this.#message.index, item: messageItem(id, "", "in_progress") });
      this.#send({ type: "response.content_part.added", item_id: id, output_index: this.#message.index, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
    }
    this.#message.text += delta;
    this.#send({ type: "response.output_text.delta", item_id: this.#message.id, output_index: this.#message.index, content_index: 0, delta, logprobs: [] });
  }

  /** Close the message being written, if any. */
  endText(): void {
    const message = this.#message;
    if (!message) return;
    this.#message = undefined;
    this.#send({ type: "response.output_text.done", item_id: message.id, output_index: message.index, content_index: 0, text: message.text, logprobs: [] });
    this.#send({ type: "response.content_part.done", item_id: message.id, output_index: message.index, content_index: 0, part: { type: "output_text", text: message.text, annotations: [] } });
    const item = messageItem(message.id, message.text, "completed");
    this.output.push(item);
    this.#send({ type: "response.output_item.done", output_index: message.index, item });
  }

  functionCalls(calls: ClientCall[]): void {
    this.endText();
    for (const call of calls) {
      const id = newWireId("fc_");
      const index = this.output.length;
      this.#send({ type: "response.output_item.added", output_index: index, item: functionCallItem(id, call, "in_progress") });
      this.#send({ type: "response.function_call_arguments.delta", item_id: id, output_index: index, delta: call.arguments });
      this.#send({ type: "response.function_call_arguments.done", item_id: id, output_index: index, arguments: call.arguments, name: call.name });
      const item = functionCallItem(id, call, "completed");
      this.output.push(item);
      this.#send({ type: "response.output_item.done", output_index: index, item });
    }
  }

  /** The end: `response.completed`, `response.failed` or `response.cancelled`'s object. */
  finish(response: Response): void {
    this.endText();
    this.#send({ type: response.status === "completed" ? "response.completed" : response.status === "incomplete" ? "response.incomplete" : "response.failed", response } as Event);
    if (!this.#response.destroyed && !this.#response.writableEnded) this.#response.end();
  }

  #send(event: Event): void {
    if (this.#response.destroyed || this.#response.writableEnded) return;
    const numbered = { ...event, sequence_number: this.#sequence++ } as ResponseStreamEvent;
    this.#response.write(`event: ${numbered.type}\ndata: ${JSON.stringify(numbered)}\n\n`);
  }
}
