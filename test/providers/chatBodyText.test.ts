import { describe, expect, it } from "vitest";
import type { ModelMessage } from "../../src/providers/Model.js";
import { chatBodyText, toChatCompletionMessages } from "../../src/providers/toChatCompletionMessages.js";

// The body of a chat completions request is sent as text made of each message's JSON, kept from round to round.
describe("chatBodyText", () => {
  it("is the body's JSON, and a message changed in place since is serialised anew", () => {
    const messages: ModelMessage[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather?", media: [{ type: "image", mimeType: "image/png", data: "AAAA" }] },
      { role: "assistant", content: null, toolCalls: [{ id: "c1", name: "get_weather", arguments: '{"city":"Paris"}' }] },
      { role: "tool", content: "Sunny", toolCallId: "c1", name: "get_weather" },
    ];
    const body = { model: "gpt-test", messages: toChatCompletionMessages(messages), temperature: 0.2, stream: false };
    expect(JSON.parse(chatBodyText(body))).toEqual(JSON.parse(JSON.stringify(body)));
    messages[3]!.content = "Rainy";
    const again = JSON.parse(chatBodyText({ ...body, messages: toChatCompletionMessages(messages) })) as { messages: Array<{ content: unknown }> };
    expect(again.messages[3]!.content).toBe("Rainy");
    expect(JSON.parse(chatBodyText({ messages: [] } as never))).toEqual({ messages: [] });
  });
});
