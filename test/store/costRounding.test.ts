import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/index.js";
import { PriceTable } from "../../src/providers/PriceTable.js";
import { RunTally } from "../../src/store/RunTally.js";

// What a person reads in results, JSON and reports: a cost as the decimal it is, not the float noise of prices
// times tokens (a newcomer's batch results showed 0.00003539999999999999).
const prices = PriceTable.load({ "cheap-model": { input: 0.15, output: 0.6 }, "other-model": { input: 0.3, output: 1.2 } });
const reply = (model: string, promptTokens: number): Extract<AgentEvent, { type: "model_reply" }> => ({ type: "model_reply", agent: "bot", round: 0, model, text: "ok", toolCalls: [], usage: { promptTokens, completionTokens: 0 } });

describe("costs", () => {
  it("of one call are the decimal they are (7 tokens at $0.15 per million: 0.00000105)", () => {
    const cost = prices.costOf("cheap-model", { promptTokens: 7, completionTokens: 0 });
    expect(JSON.stringify(cost)).toBe("0.00000105");
  });

  it("summed over a run's calls stay as exact as their parts", () => {
    const tally = new RunTally(prices);
    tally.add(reply("other-model", 1));
    tally.add(reply("cheap-model", 5));
    // 3e-7 + 7.5e-7 in floating point is 0.0000010500000000000001.
    expect(JSON.stringify(tally.cost)).toBe("0.00000105");
  });
});
