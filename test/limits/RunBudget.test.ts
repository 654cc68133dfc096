import { describe, expect, it } from "vitest";
import { ConfigError, RunLimitError } from "../../src/errors.js";
import { RunBudget } from "../../src/limits/index.js";
import type { Model, ModelRequest, ModelResponse } from "../../src/providers/Model.js";
import { PriceTable } from "../../src/providers/PriceTable.js";
import { waitUntil } from "../helpers/waitUntil.js";

/** $1 per million prompt tokens, $4 per million answer tokens: round numbers to check sums by hand. */
const prices = PriceTable.load({ "test-model": { input: 1, output: 4 }, "other-model": { input: 10, output: 40 } });

/** A model that answers at once with the usage it is given, and counts its calls. */
function fakeModel(name: string, usage = { promptTokens: 1000, completionTokens: 100 }): Model & { calls: number } {
  const model = {
    name,
    calls: 0,
    generate: async (): Promise<ModelResponse> => {
      model.calls += 1;
      return { message: { role: "assistant", content: "ok" }, toolCalls: [], usage };
    },
  };
  return model;
}

const request = (text: string, maxTokens = 100): ModelRequest => ({ messages: [{ role: "user", content: text }], modelArgs: { max_tokens: maxTokens } });

async function stopped(promise: Promise<unknown>): Promise<RunLimitError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(RunLimitError);
  return error as RunLimitError;
}

describe("RunBudget", () => {
  it("refuses a request whose worst case would cross max_cost, before sending it, and aborts its signal", async () => {
    // Each call costs 1000 x $1/M + 100 x $4/M = $0.0014; the worst case of the next is its prompt plus 100 answer tokens.
    const budget = RunBudget.start({ limits: { maxCost: 0.004 }, prices });
    const model = fakeModel("test-model");
    const guarded = budget.guardModel(model, "bot");
    await guarded.generate(request("hello"));
    await guarded.generate(request("hello"));
    const error = await stopped(guarded.generate(request("hello")));
    // $0.0028 spent; one more call ($0.0014 when it comes) would reach $0.0042: not sent.
    expect(model.calls).toBe(2);
    expect(error.code).toBe("limit_max_cost");
    expect(error.exitCode).toBe(3);
    expect(error.limit).toBe("max_cost");
    expect(error.spent).toBeCloseTo(0.0028, 10);
    expect(error.message).toMatch(/^max_cost reached \(\$0\.004, limits\.max_cost\): \$0\.0028 spent, and the next call to test-model could cost up to \$0\.001\d+ /);
    expect(error.message).toContain("by agent: bot $0.0028 (2 model calls)");
    expect(budget.signal.aborted).toBe(true);
    expect(budget.signal.reason).toBe(error);
    // Every later check fails with the same error: the run is over.
    await expect(guarded.generate(request("x"))).rejects.toBe(error);
    expect(() => budget.beforeToolCall({ agent: "bot", tool: "t" })).toThrow(error);
  });

  it("takes the worst answer from max_tokens, so a request that may answer at length is refused sooner", async () => {
    const budget = RunBudget.start({ limits: { maxCost: 0.01 }, prices });
    const guarded = budget.guardModel(fakeModel("test-model"), "bot");
    await guarded.generate(request("hello", 100));
    // 2,000 answer tokens could cost $0.008 more: with $0.0014 spent, that crosses $0.01.
    await stopped(guarded.generate(request("hello", 2000)));
  });

  it("checks each answer too: an answer that brings the spend over the limit stops the run", async () => {
    const budget = RunBudget.start({ limits: { maxTokens: 1500 }, prices });
    const guarded = budget.guardModel(fakeModel("test-model", { promptTokens: 1200, completionTokens: 400 }), "bot");
    const error = await stopped(guarded.generate(request("hi", 10)));
    expect(error.code).toBe("limit_max_tokens");
    expect(error.spent).toBe(1600);
  });

  it("counts tool calls and refuses the one past max_tool_calls without running it", () => {
    const budget = RunBudget.start({ limits: { maxToolCalls: 2 }, prices });
    budget.beforeToolCall({ agent: "bot", tool: "get_weather" });
    budget.afterToolCall({ agent: "bot", tool: "get_weather", durationMs: 5, failed: false });
    budget.beforeToolCall({ agent: "bot", tool: "divide" });
    budget.afterToolCall({ agent: "bot", tool: "divide", durationMs: 1, failed: true });
    let error: unknown;
    try {
      budget.beforeToolCall({ agent: "bot", tool: "get_weather" });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RunLimitError);
    expect((error as RunLimitError).message).toContain("the run has made 2 tool calls, its limit; `get_weather` (agent `bot`) was not run");
    const report = budget.report();
    expect(report.toolCalls).toBe(2);
    expect(report.byTool).toEqual({
      get_weather: { calls: 1, failed: 0, durationMs: 5, modelCalls: 0, promptTokens: 0, completionTokens: 0, cost: 0 },
      divide: { calls: 1, failed: 1, durationMs: 1, modelCalls: 0, promptTokens: 0, completionTokens: 0, cost: 0 },
    });
  });

  it("stops the run at max_duration even while nothing calls it: the signal aborts", async () => {
    const budget = RunBudget.start({ limits: { maxDuration: 0.05 }, prices });
    expect(await waitUntil(() => budget.signal.aborted)).toBe(true);
    expect((budget.signal.reason as RunLimitError).code).toBe("limit_max_duration");
    budget.close();
  });

  it("attributes a nested scope's spend to its agents under the tool's name and to the tool; its own limits hold too", async () => {
    const budget = RunBudget.start({ prices });
    await budget.guardModel(fakeModel("test-model"), "main").generate(request("a"));
    const nested = budget.child({ tool: "briefing", agentPrefix: "briefing/", limits: { maxToolCalls: 1 } });
    await nested.guardModel(fakeModel("other-model"), "reporter").generate(request("b"));
    nested.beforeToolCall({ agent: "reporter", tool: "get_weather" });
    expect(() => nested.beforeToolCall({ agent: "reporter", tool: "get_weather" })).toThrow(RunLimitError);
    // A limit of the nested tactic stops the whole run: the shared signal aborts.
    expect(budget.signal.aborted).toBe(true);
    const report = budget.report();
    expect(Object.keys(report.byAgent)).toEqual(["main", "briefing/reporter"]);
    expect(report.byAgent["briefing/reporter"]).toEqual({ modelCalls: 1, promptTokens: 1000, completionTokens: 100, cost: 0.014, toolCalls: 1 });
    expect(report.byTool["briefing"]).toMatchObject({ modelCalls: 1, promptTokens: 1000, completionTokens: 100, cost: 0.014 });
    expect(report.cost).toBeCloseTo(0.0154, 10);
  });

  it("prices the model that answered a fallback chain's call", async () => {
    const budget = RunBudget.start({ prices });
    const chain: Model = { name: "test-model", generate: async () => ({ message: { role: "assistant", content: "ok" }, toolCalls: [], usage: { promptTokens: 1000, completionTokens: 0 }, model: "other-model" }) };
    await budget.guardModel(chain, "bot").generate(request("a"));
    expect(budget.report().cost).toBeCloseTo(0.01, 10);
  });

  it("a model without a price under a cost limit is the user's error (exit 2); a scripted model costs nothing", async () => {
    const budget = RunBudget.start({ limits: { maxCost: 1 }, prices });
    const error = await budget.guardModel(fakeModel("my-private-model"), "bot").generate(request("a")).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe("limit_unpriced_model");
    expect((error as ConfigError).message).toBe("model `my-private-model` has no known price, so limits.max_cost cannot count what it costs");
    await budget.guardModel(fakeModel("scripted:turns.yaml"), "bot").generate(request("a"));
    expect(budget.report().cost).toBe(0);
    // Without a cost limit, an unknown price is only an unknown cost.
    const free = RunBudget.start({ prices });
    await free.guardModel(fakeModel("my-private-model"), "bot").generate(request("a"));
    expect(free.report().cost).toBeNull();
  });

  it("estimates the next prompt from the model's own tokens per character", async () => {
    // 4,000 characters answered as 1,000 prompt tokens: a 30,000-character prompt is about 8,250 tokens (with a
    // 10% margin), which with 100 answer tokens still fits beside the 1,100 used of 10,000; 40,000 characters do not.
    const calibrated = async (): Promise<Model> => {
      const budget = RunBudget.start({ limits: { maxTokens: 10_000 }, prices });
      const guarded = budget.guardModel(fakeModel("test-model"), "bot");
      await guarded.generate(request("x".repeat(4000 - 12)));
      return guarded;
    };
    await (await calibrated()).generate(request("y".repeat(30_000)));
    const error = await stopped((await calibrated()).generate(request("y".repeat(40_000))));
    expect(error.code).toBe("limit_max_tokens");
    expect(error.message).toContain("about 11,004 prompt tokens, up to 100 answer tokens");
  });
});

describe("PromptSizer", () => {
  it("measures a growing dialog as promptCharacters does, counting only the new messages, and starts over on another dialog", async () => {
    const { PromptSizer, promptCharacters } = await import("../../src/limits/requestSize.js");
    const sizer = new PromptSizer();
    const system = { role: "system" as const, content: "You are the bot." };
    const user = { role: "user" as const, content: "Weather in Paris?" };
    const call = { role: "assistant" as const, content: null, toolCalls: [{ id: "c1", name: "get_weather", arguments: '{"city":"Paris"}' }] };
    const result = { role: "tool" as const, content: "Sunny", toolCallId: "c1" };
    const tools = [{ type: "function" as const, function: { name: "get_weather", description: "Weather", parameters: {} } }];
    for (const messages of [[system, user], [system, user, call, result], [system, user, call, result, { role: "user" as const, content: "And Rome?" }], [{ role: "system" as const, content: "Another dialog." }, user]]) {
      const request = { messages, tools };
      expect(sizer.measure(request)).toBe(promptCharacters(request));
    }
  });
});

describe("RunBudget with calls in parallel", () => {
  it("holds the worst case of each request on its way, so that parallel calls cannot cross the line together", async () => {
    // Each request's worst case is $0.0024 at most (its prompt, up to 100 answer tokens at $4/M = $0.0004, plus
    // the prompt at $1/M): two fit under $0.005 together, a third on its way would not.
    const budget = RunBudget.start({ limits: { maxCost: 0.005 }, prices });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let sent = 0;
    const slow: Model = { name: "test-model", generate: async () => (sent += 1, await gate, { message: { role: "assistant", content: "ok" }, toolCalls: [], usage: { promptTokens: 10, completionTokens: 10 } }) };
    const guarded = budget.guardModel(slow, "bot");
    const prompt = request("x".repeat(3000));
    const first = guarded.generate(prompt);
    const second = guarded.generate(prompt);
    const third = guarded.generate(prompt);
    third.catch(() => undefined);
    expect(sent).toBe(2); // the third never reached the model
    release();
    await stopped(third);
    await Promise.allSettled([first, second]);
  });

  it("releases the worst case of a request that failed", async () => {
    const budget = RunBudget.start({ limits: { maxCost: 0.003 }, prices });
    const failing: Model = { name: "test-model", generate: async () => Promise.reject(new Error("down")) };
    const guarded = budget.guardModel(failing, "bot");
    for (let attempt = 0; attempt < 5; attempt += 1) await expect(guarded.generate(request("x".repeat(3000)))).rejects.toThrow("down");
    expect(budget.signal.aborted).toBe(false);
  });
});
