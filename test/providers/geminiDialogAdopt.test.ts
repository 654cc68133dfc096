import { describe, expect, it } from "vitest";
import { GeminiDialog } from "../../src/providers/GeminiDialog.js";

/** Gemini's answer with one function call and no id (Gemini 2.x): lllm names the call itself. */
const reply = (name: string) => ({ candidates: [{ content: { role: "model", parts: [{ functionCall: { name, args: {} }, thoughtSignature: "c2ln" }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2 } });

describe("GeminiDialog.adopt: answers a resumed run replays from its record", () => {
  it("keeps their call parts to send back, and names the next call after theirs", () => {
    const first = new GeminiDialog();
    const recorded = [first.readReply(reply("a")), first.readReply(reply("b"))];
    expect(recorded.map((response) => response.toolCalls[0]!.id)).toEqual(["call_gemini_1", "call_gemini_2"]);
    expect(recorded[1]!.carry).toEqual({ gemini: { call_gemini_2: { functionCall: { name: "b", args: {} }, thoughtSignature: "c2ln" } } });

    // The resumed run's model: the recorded answers adopted, then one live answer.
    const resumed = new GeminiDialog();
    for (const response of recorded) resumed.adopt(JSON.parse(JSON.stringify(response)));
    expect(resumed.readReply(reply("c")).toolCalls[0]!.id).toBe("call_gemini_3");
    const body = resumed.requestBody({ messages: [{ role: "user", content: "go" }, { role: "assistant", content: null, toolCalls: [{ id: "call_gemini_1", name: "a", arguments: "{}" }] }, { role: "tool", toolCallId: "call_gemini_1", name: "a", content: "ok" }] });
    expect(JSON.stringify(body)).toContain('"thoughtSignature":"c2ln"');
  });

  it("names the calls of a batch job's answers after their request, whatever order they are read in", () => {
    const first = new GeminiDialog();
    const ids = ["aaa", "bbb"].map((seed) => first.readReply(reply(seed), seed).toolCalls[0]!.id);
    expect(ids).toEqual(["call_gemini_aaa_1", "call_gemini_bbb_1"]);
    // Run again after a kill, the same answers read the other way round keep their names.
    const again = new GeminiDialog();
    expect(["bbb", "aaa"].map((seed) => again.readReply(reply(seed), seed).toolCalls[0]!.id)).toEqual(["call_gemini_bbb_1", "call_gemini_aaa_1"]);
  });
});
