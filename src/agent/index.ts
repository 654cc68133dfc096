export { Agent, UNCAPPED_ROUNDS, type AgentOptions, type RespondOptions } from "./Agent.js";
export { Dialog } from "./Dialog.js";
export type { Message, MessageRole } from "./Message.js";
export type { AgentEvent } from "./AgentEvent.js";
export type { Session, SessionUsage } from "./Session.js";
export { UnknownToolError } from "./UnknownToolError.js";
export { ROUND_LIMIT_TEXT } from "./runToolLoop.js";
export { REPEATED_CALL_TEXT } from "./runToolRound.js";
