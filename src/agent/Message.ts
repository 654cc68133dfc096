import type { MediaAttachment, ToolCallRequest, Usage } from "../providers/Model.js";

/**
 * Who wrote a message. An assistant turn that asks for tools is `tool_call` (LLLM's role), so a dialog reads as
 * the seed prints it: `tool_call | weather_bot`, then one `tool | get_weather` per call, then `assistant`.
 */
export type MessageRole = "system" | "user" | "assistant" | "tool_call" | "tool";

/** One entry of a Dialog. */
export interface Message {
  role: MessageRole;
  /** The text; for a `tool_call` message any text the model wrote besides its calls (often empty). */
  content: string;
  /** `system`, `user`, the agent's name (assistant and tool_call), or the tool's name (tool). */
  name: string;
  /** On a `tool_call` message: the calls as the model asked for them, arguments as raw JSON text. */
  toolCalls?: ToolCallRequest[];
  /** On a `tool` message: the id of the call it answers. */
  toolCallId?: string;
  /** On a `tool` message: the call failed and `content` says why (sent as Anthropic's `is_error`). */
  isError?: boolean;
  /**
   * On a `tool` message: the images (and audio) of a rich result (`toolResult`), sent to the model in its
   * provider's form beside `content`, which notes each of them in brackets. On a `user` message: the images the
   * user sent with the text (a served request's image parts), sent after `content`.
   */
  media?: MediaAttachment[];
  /** On a final assistant message: what the turn's parser returned (or the JSON, with a response format). */
  parsed?: unknown;
  /** On a model-written message: the tokens of the model call that wrote it. */
  usage?: Usage;
}
