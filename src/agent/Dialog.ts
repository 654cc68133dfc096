import type { ModelMessage } from "../providers/Model.js";
import type { Prompt } from "../prompts/index.js";
import type { Message } from "./Message.js";

/**
 * An ordered conversation of one agent under one topic. Besides the messages it remembers the most recent turn
 * prompt (seed 000, Lesson 3 Step 3): that prompt's tools and parser govern the next respond().
 */
export class Dialog {
  /** The topic given to `Agent.open()`. */
  readonly name: string;
  readonly #messages: Message[] = [];
  /**
   * Each message's model form, made once: a run of many rounds sends its whole dialog every round, and the same
   * objects each time let the providers' own conversions be made once too (see toChatCompletionMessages).
   */
  readonly #forms: Array<ModelForm | undefined> = [];
  /** The prompt of the latest turn, set by `receivePrompt()` and cleared by a plain `receive()`. */
  turnPrompt: Prompt | undefined;

  constructor(name: string) {
    this.name = name;
  }

  /** The messages in order. Read-only: add with `add()`. */
  get messages(): readonly Message[] {
    return this.#messages;
  }

  add(message: Message): Message {
    this.#messages.push(message);
    return message;
  }

  /** The dialog in the chat format models take. */
  toModelMessages(): ModelMessage[] {
    return this.#messages.map((message, index) => {
      const known = this.#forms[index];
      if (known && sameFields(known.from, message)) return known.form;
      const form = toModelMessage(message);
      this.#forms[index] = { from: { ...message }, form };
      return form;
    });
  }
}

interface ModelForm {
  readonly from: Message;
  readonly form: ModelMessage;
}

/** The fields `toModelMessage` reads, unchanged since (a message's fields are plain data anyone may set). */
function sameFields(a: Message, b: Message): boolean {
  return a.content === b.content && a.toolCalls === b.toolCalls && a.toolCallId === b.toolCallId && a.isError === b.isError && a.role === b.role && a.name === b.name && a.media === b.media;
}

export function toModelMessage(message: Message): ModelMessage {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content };
    case "user":
      return { role: "user", content: message.content, ...(message.media && message.media.length > 0 ? { media: message.media } : {}) };
    case "assistant":
      return { role: "assistant", content: message.content };
    case "tool_call":
      // Chat APIs take `null` content beside tool calls; an empty string is refused by some servers.
      return { role: "assistant", content: message.content === "" ? null : message.content, toolCalls: message.toolCalls ?? [] };
    case "tool":
      return { role: "tool", content: message.content, toolCallId: message.toolCallId ?? "", name: message.name, ...(message.isError ? { isError: true } : {}), ...(message.media && message.media.length > 0 ? { media: message.media } : {}) };
  }
}
