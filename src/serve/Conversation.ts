import type { Message } from "../agent/index.js";
import type { MediaAttachment } from "../providers/Model.js";

/**
 * A request's messages as a run takes them, whatever the protocol: the client's system texts (added after the
 * tactic's own system prompt), the earlier turns (the dialog a run continues, as `lllm run -c` carries one), and
 * what the request asks: a new turn's input, or the results of the tool calls a paused run waits for.
 */
export interface Conversation {
  system: string[];
  turns: Message[];
  /** The last user message's text, when the request ends with one. */
  input?: string;
  /** The images of that message (its image parts). */
  inputMedia?: MediaAttachment[];
  /** The client's tool results by call id, when the request ends with them. */
  toolResults?: Map<string, string>;
  /** Where the messages are in the request, for errors (`messages`, `input`). */
  param: string;
}

/** A conversation that ends with this user message: its text is the input, its images go with it. */
export function endingWith(message: Message, rest: Omit<Conversation, "input" | "inputMedia" | "toolResults">): Conversation {
  return { ...rest, input: message.content, ...(message.media && message.media.length > 0 ? { inputMedia: message.media } : {}) };
}

/** The user message a conversation ends with, as the dialog keeps it (its images too). */
export function inputMessage(conversation: Conversation): Message | undefined {
  if (conversation.input === undefined) return undefined;
  return { role: "user", content: conversation.input, name: "user", ...(conversation.inputMedia ? { media: conversation.inputMedia } : {}) };
}

/** The dialog a new run of the conversation starts from: the system texts, then the earlier turns. */
export function historyOf(conversation: Conversation): Message[] {
  return [...conversation.system.map((content): Message => ({ role: "system", content, name: "system" })), ...conversation.turns];
}
