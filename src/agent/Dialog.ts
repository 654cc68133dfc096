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
    return this.#messages.map(toModelMessage);
  }
}

export function toModelMessage(message: Message): ModelMessage {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content };
    case "user":
      return { role: "user", content: message.content };
    case "assistant":
      return { role: "assistant", content: message.content };
    case "tool_call":
      // Chat APIs take `null` content beside tool calls; an empty string is refused by some servers.
      return { role: "assistant", content: message.content === "" ? null : message.content, toolCalls: message.toolCalls ?? [] };
    case "tool":
      return { role: "tool", content: message.content, toolCallId: message.toolCallId ?? "", name: message.name, ...(message.isError ? { isError: true } : {}) };
  }
}
