import { describe, expect, it } from "vitest";
import { ConfigError, RunLimitError } from "../../src/errors.js";
import { RunBudget } from "../../src/limits/index.js";
import type { Model, ModelRequest, ModelResponse } from "../../src/providers/Model.js";
import { PriceTable } from "../../src/providers/PriceTable.js";
import { waitUntil } from "../helpers/waitUntil.js";

/** $1 per million prompt tokens, $4 per million answer tokens: round numbers to check sums by hand. */
const prices = PriceTable.load({ "test-model": { input: 1, output: 4 }, "other-model": { input: 10, output: 40 } });

/** A model that answers at once with the usage it is given, and keeps the requests it was sent. */
function fakeModel(name: string, usage = { promptTokens: 1000, completionTokens: 100 }): Model & { calls: number; sent: ModelRequest[] } {
  const model = {
    name,
    calls: 0,
    sent: [] as ModelRequest[],
    generate: async (sent: ModelRequest): Promise<ModelResponse> => {
      model.calls += 1;
      model.sent.push(sent);
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
  it("sends each request with the answer room it can pay, and stops before one that cannot get its least (exit 3), aborting its signal", async () => {
    // Each call costs 1000 x $1/M + 100 x $4/M = $0.0014. After one, the prompt is estimated at the model's own
    // tokens per character (plus 10%): 1,100 tokens, $0.0011.
    const budget = RunBudget.start({ limits: { maxCost: 0.004 }, prices });
    const model = fakeModel("test-model");
    const guarded = budget.guardModel(model, "bot");
    await guarded.generate(request("hello"));
    await guarded.generate(request("hello"));
    const error = await stopped(guarded.generate(request("hello")));
    // $0.0028 spent; the next call needs $0.0011 for its prompt and $0.0004 for its 100 answer tokens: not sent.
    expect(model.calls).toBe(2);
    expect(model.sent.map((sent) => sent.maxAnswerTokens)).toEqual([100, 100]);
    expect(error.code).toBe("limit_max_cost");
    expect(error.exitCode).toBe(3);
    expect(error.limit).toBe("max_cost");
    expect(error.spent).toBeCloseTo(0.0028, 10);
    expect(error.message).toMatch(/^max_cost reached \(\$0\.004, limits\.max_cost\): \$0\.0028 spent, and the next call to test-model needs \$0\.0015 more \(about 1,100 prompt tokens and 100 answer tokens, the least a call is sent with\); stopped before it\./);
    expect(error.message).toContain("by agent: bot $0.0028 (2 model calls)");
    expect(budget.signal.aborted).toBe(true);
    expect(budget.signal.reason).toBe(error);
    // Every later check fails with the same error: the run is over.
    await expect(guarded.generate(request("x"))).rejects.toBe(error);
    expect(() => budget.beforeToolCall({ agent: "bot", tool: "t" })).toThrow(error);
  });

  it("cuts a request's answer room to what the budget can still pay, instead of refusing the call", async () => {
    const budget = RunBudget.start({ limits: { maxCost: 0.01 }, prices });
    const model = fakeModel("test-model");
    const guarded = budget.guardModel(model, "bot");
    await guarded.generate(request("hello", 100));
    // 2,000 answer tokens could cost $0.008: with $0.0014 spent and $0.0011 for the prompt, $0.0075 pays 1,875 of them.
    await guarded.generate(request("hello", 2000));
    expect(model.sent.map((sent) => sent.maxAnswerTokens)).toEqual([100, 1875]);
    // Without max_tokens, a request asks for the assumed 4,096 and gets what is left, down to 256 tokens.
    const tight = RunBudget.start({ limits: { maxTokens: 1000 }, prices });
    const other = fakeModel("test-model", { promptTokens: 20, completionTokens: 30 });
    await tight.guardModel(other, "bot").generate({ messages: [{ role: "user", content: "hi" }] });
    expect(other.sent[0]!.maxAnswerTokens).toBe(1000 - Math.ceil((2 + 12) * 0.5 * 1.1));
    // Without a cost or token limit nothing is cut.
    const free = fakeModel("test-model");
    await RunBudget.start({ limits: { maxToolCalls: 3 }, prices }).guardModel(free, "bot").generate({ messages: [{ role: "user", content: "hi" }] });
    expect(free.sent[0]!.maxAnswerTokens).toBeUndefined();
  });

  it("stops when the smallest answer (256 tokens) cannot be paid, for a request that asked for more", async () => {
    const budget = RunBudget.start({ limits: { maxTokens: 300 }, prices });
    const model = fakeModel("test-model");
    const error = await stopped(budget.guardModel(model, "bot").generate({ messages: [{ role: "user", content: "x".repeat(100) }] }));
    expect(model.calls).toBe(0);
    expect(error.message).toContain("0 tokens used, and the next call to test-model needs 318 more (about 62 prompt tokens and 256 answer tokens, the least a call is sent with)");
  });

  it("counts an answer that brings the spend over the limit and returns it, then stops the run", async () => {
    const budget = RunBudget.start({ limits: { maxTokens: 1500 }, prices });
    const guarded = budget.guardModel(fakeModel("test-model", { promptTokens: 1200, completionTokens: 400 }), "bot");
    const answer = await guarded.generate(request("hi", 10));
    // The run's listeners (the tool loop's events, the run store) see it: it was paid for.
    expect(answer.message.content).toBe("ok");
    expect(budget.report()).toMatchObject({ modelCalls: 1, promptTokens: 1200, completionTokens: 400 });
    const error = budget.tripped!;
    expect(error.code).toBe("limit_max_tokens");
    expect(error.spent).toBe(1600);
    expect(budget.signal.reason).toBe(error);
    await expect(guarded.generate(request("hi", 10))).rejects.toBe(error);
  });

  it("an answer cut off at a room the budget cut is not complete: the run stops, naming the limit", async () => {
    const budget = RunBudget.start({ limits: { maxCost: 0.004 }, prices });
    const cut: Model = { name: "test-model", generate: async (sent) => ({ message: { role: "assistant", content: "The answer is" }, toolCalls: [], usage: { promptTokens: 10, completionTokens: sent.maxAnswerTokens ?? 0 }, finishReason: "length" }) };
    await budget.guardModel(cut, "bot").generate({ messages: [{ role: "user", content: "Write a long essay." }] });
    const error = budget.tripped!;
    expect(error.code).toBe("limit_max_cost");
    expect(error.message).toMatch(/^max_cost reached \(\$0\.004, limits\.max_cost\): the answer of test-model \(agent `bot`\) was cut off at 9\d\d answer tokens, all that was left could pay \(it asked for up to 4,096\), and a cut answer is not a complete one\./);
    // An answer cut at the request's own max_tokens is the tool loop's to judge (it says to raise max_tokens).
    const roomy = RunBudget.start({ limits: { maxCost: 1 }, prices });
    await roomy.guardModel(cut, "bot").generate(request("Write a long essay.", 50));
    expect(roomy.tripped).toBeUndefined();
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

  it("a max_duration longer than a timer can wait (about 24.8 days) does not stop the run at once", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on("warning", onWarning);
    try {
      const budget = RunBudget.start({ limits: { maxDuration: 3_000_000 }, prices });
      // A timer that overflowed fires after 1 ms: give it far more than that, on events, then look.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await new Promise((resolve) => setImmediate(resolve));
      expect(budget.signal.aborted).toBe(false);
      expect(() => budget.beforeToolCall({ agent: "bot", tool: "get_weather" })).not.toThrow();
      budget.close();
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("TimeoutOverflowWarning");
  });

  it("attributes a nested scope's spend to its agents, by the names they are given, and to the tool; its own limits hold too", async () => {
    const budget = RunBudget.start({ prices });
    await budget.guardModel(fakeModel("test-model"), "main").generate(request("a"));
    const nested = budget.child({ tool: "briefing", limits: { maxToolCalls: 1 } });
    await nested.guardModel(fakeModel("other-model"), "briefing/reporter").generate(request("b"));
    nested.beforeToolCall({ agent: "briefing/reporter", tool: "get_weather" });
    expect(() => nested.beforeToolCall({ agent: "briefing/reporter", tool: "get_weather" })).toThrow(RunLimitError);
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
    expect(error.message).toContain("about 11,004 prompt tokens and 100 answer tokens");
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
  it("holds the worst case of each request on its way, so that parallel calls cannot cross the line together: one that does not fit waits", async () => {
    // Each request's worst case is about $0.0024 (its prompt, about 1,600 tokens at $1/M, and 100 answer tokens at
    // $4/M): two fit under $0.005 together, a third waits for their answers, which leave room (20 tokens each).
    const budget = RunBudget.start({ limits: { maxCost: 0.005 }, prices });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let sent = 0;
    const slow: Model = { name: "test-model", generate: async () => (sent += 1, await gate, { message: { role: "assistant", content: "ok" }, toolCalls: [], usage: { promptTokens: 10, completionTokens: 10 } }) };
    const guarded = budget.guardModel(slow, "bot");
    const prompt = request("x".repeat(3000));
    const calls = [guarded.generate(prompt), guarded.generate(prompt), guarded.generate(prompt)];
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toBe(2); // the third has not reached the model
    release();
    await Promise.all(calls);
    expect(sent).toBe(3);
    expect(budget.tripped).toBeUndefined();
    expect(budget.report().modelCalls).toBe(3);
  });

  it("a request that cannot fit waits for those on their way to be counted before it stops the run", async () => {
    // Three parallel requests of about 1,600 prompt tokens under 4,000 tokens: two go; the third cannot get its 100
    // answer tokens, and stops the run only once the two answers (3,000 tokens each, more than estimated) are counted.
    const budget = RunBudget.start({ limits: { maxTokens: 4000 }, prices });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow: Model = { name: "test-model", generate: async () => (await gate, { message: { role: "assistant", content: "ok" }, toolCalls: [], usage: { promptTokens: 1500, completionTokens: 1500 } }) };
    const guarded = budget.guardModel(slow, "bot");
    const prompt = request("x".repeat(3000));
    const first = guarded.generate(prompt);
    const second = guarded.generate(prompt);
    const third = guarded.generate(prompt);
    third.catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    expect(budget.tripped).toBeUndefined();
    release();
    // Both answers come back to their callers and are counted, although the second brings the spend over the line.
    await expect(first).resolves.toMatchObject({ message: { content: "ok" } });
    await expect(second).resolves.toMatchObject({ message: { content: "ok" } });
    const error = await stopped(third);
    expect(error.code).toBe("limit_max_tokens");
    expect(budget.report()).toMatchObject({ modelCalls: 2, promptTokens: 3000, completionTokens: 3000 });
  });

  it("releases the worst case of a request that failed", async () => {
    const budget = RunBudget.start({ limits: { maxCost: 0.003 }, prices });
    const failing: Model = { name: "test-model", generate: async () => Promise.reject(new Error("down")) };
    const guarded = budget.guardModel(failing, "bot");
    for (let attempt = 0; attempt < 5; attempt += 1) await expect(guarded.generate(request("x".repeat(3000)))).rejects.toThrow("down");
    expect(budget.signal.aborted).toBe(false);
  });
});
