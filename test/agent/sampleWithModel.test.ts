import { describe, expect, it } from "vitest";
import { sampleWithModel } from "../../src/agent/sampleWithModel.js";
import type { Model, ModelRequest } from "../../src/providers/Model.js";
import { markSample } from "../../src/tools/sampleRequest.js";

/** A model that answers "ok" and keeps what it was asked. */
function keeping(): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return { name: "m", requests, generate: async (request) => (requests.push(request), { message: { role: "assistant", content: "ok" }, toolCalls: [], usage: { promptTokens: 1, completionTokens: 1 } }) };
}

describe("a tool's ctx.sample as a model request", () => {
  it("names no agent (cassettes and scripts answer it by its text), unless a resumed run's record may answer it", async () => {
    const model = keeping();
    const request = { systemPrompt: "Be brief.", messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "Sum up" }, { type: "image" as const, data: "AAAA", mimeType: "image/png" }] }], maxTokens: 20 };
    await sampleWithModel(request, { model, agent: "worker", round: 2 });
    await sampleWithModel(markSample(request, "rerun"), { model, agent: "worker", round: 2 });
    await sampleWithModel(markSample(request, "replay"), { model, agent: "worker", round: 2 });
    expect(model.requests.map((sent) => [sent.agent, sent.fromRecord])).toEqual([
      [undefined, undefined],
      ["worker", "rerun"],
      ["worker", "replay"],
    ]);
    // The same messages each time: a replayed request matches the recorded one.
    const [plain, rerun, replay] = model.requests.map((sent) => JSON.stringify(sent.messages));
    expect(rerun).toBe(plain);
    expect(replay).toBe(plain);
    expect(model.requests[0]!.messages[1]).toMatchObject({ role: "user", content: expect.stringContaining("Sum up") });
  });
});
