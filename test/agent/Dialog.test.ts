import { describe, expect, it } from "vitest";
import { Dialog } from "../../src/agent/Dialog.js";
import { toChatCompletionMessages } from "../../src/providers/toChatCompletionMessages.js";

// A dialog is sent whole every round, so its chat form is made once per message; what is sent must still follow
// every change a caller makes to a message in place.
describe("a dialog's chat form", () => {
  it("is the same objects round after round, and follows a message changed in place", () => {
    const dialog = new Dialog("t");
    dialog.add({ role: "system", content: "Be brief.", name: "system" });
    const question = dialog.add({ role: "user", content: "Weather?", name: "user" });
    dialog.add({ role: "tool_call", content: "", name: "bot", toolCalls: [{ id: "c1", name: "get_weather", arguments: '{"city":"Paris"}' }] });
    dialog.add({ role: "tool", content: "Sunny", name: "get_weather", toolCallId: "c1" });

    const first = dialog.toModelMessages();
    const second = dialog.toModelMessages();
    expect(second).toEqual(first);
    expect(second[1]).toBe(first[1]);
    expect(toChatCompletionMessages(second)[2]).toBe(toChatCompletionMessages(first)[2]);
    expect(toChatCompletionMessages(first)).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather?" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", content: "Sunny", tool_call_id: "c1" },
    ]);

    question.content = "Weather in Oslo?";
    const changed = dialog.toModelMessages();
    expect(changed[1]).toEqual({ role: "user", content: "Weather in Oslo?" });
    expect(toChatCompletionMessages(changed)[1]).toEqual({ role: "user", content: "Weather in Oslo?" });
  });
});
