import type { Message } from "../agent/index.js";

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
  /** The client's tool results by call id, when the request ends with them. */
  toolResults?: Map<string, string>;
  /** Where the messages are in the request, for errors (`messages`, `input`). */
  param: string;
}

/** The dialog a new run of the conversation starts from: the system texts, then the earlier turns. */
export function historyOf(conversation: Conversation): Message[] {
  return [...conversation.system.map((content): Message => ({ role: "system", content, name: "system" })), ...conversation.turns];
}
