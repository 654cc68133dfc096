import type { FunctionCall } from "../tools/index.js";
import type { Message } from "./Message.js";

/** Tokens and model calls of one respond(), summed over every call (tool rounds and parse retries included). */
export interface SessionUsage {
  promptTokens: number;
  completionTokens: number;
  llmCalls: number;
}

/** Everything one respond() did; returned by `respond({ returnSession: true })`. */
export interface Session {
  /** The final assistant message (also the last message of the dialog). */
  message: Message;
  /**
   * The tool calls by step, as LLLM's `session.interrupts`: a Map (ordered, integer keys) from the step, the
   * round index starting at 0, to the rounds of calls made in that step, each round the calls the model asked
   * for together. In this loop a step makes exactly one round, so each value holds one list.
   */
  interrupts: Map<number, FunctionCall[][]>;
  /** Every call of this respond(), in the order the model asked for them. */
  calls: FunctionCall[];
  usage: SessionUsage;
  /** Wall-clock time of the respond(). */
  durationMs: number;
}
