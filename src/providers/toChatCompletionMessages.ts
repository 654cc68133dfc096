import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { ModelMessage } from "./Model.js";

/** Our messages in the chat-completions wire format (snake_case `tool_calls` / `tool_call_id`). */
export function toChatCompletionMessages(messages: ModelMessage[]): ChatCompletionMessageParam[] {
  return messages.map((message): ChatCompletionMessageParam => {
    switch (message.role) {
      case "system":
      case "user":
        return { role: message.role, content: message.content };
      case "assistant":
        // An empty `tool_calls` list is rejected by OpenAI ("[] is too short"), so it is left out.
        return message.toolCalls && message.toolCalls.length > 0
          ? {
              role: "assistant",
              content: message.content,
              tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } })),
            }
          : { role: "assistant", content: message.content ?? "" };
      case "tool":
        // `name` is not part of the current tool message and some servers reject unknown fields, so it is dropped.
        return { role: "tool", content: message.content, tool_call_id: message.toolCallId };
    }
  });
}
