import { describe, expect, it } from "vitest";
import { PriceTable } from "../../src/providers/PriceTable.js";
import { RunTally } from "../../src/store/RunTally.js";
import { parseAge } from "../../src/store/parseAge.js";
import { environmentSecrets, redactorOf } from "../../src/util/redact.js";
import { ScriptedModel } from "../../src/testing/index.js";

describe("PriceTable", () => {
  const table = PriceTable.load();

  it("finds a model by its name, a provider prefix or a dated version, and nothing else", () => {
    expect(table.priceOf("gpt-4o-mini")).toMatchObject({ input: 0.15, output: 0.6 });
    expect(table.priceOf("openai/gpt-4o-mini")).toEqual(table.priceOf("gpt-4o-mini"));
    expect(table.priceOf("gpt-4o-2024-08-06")).toEqual(table.priceOf("gpt-4o"));
    expect(table.priceOf("anthropic/claude-sonnet-4-5-20250929")).toMatchObject({ input: 3, output: 15 });
    expect(table.priceOf("anthropic/claude-sonnet-4-5-20250929")).toEqual(table.priceOf("anthropic/claude-sonnet-4-5"));
    expect(table.priceOf("gpt-4o-audio-preview")).toBeUndefined();
    expect(table.priceOf("ollama/llama3")).toBeUndefined();
    expect(table.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("prices a request only by the provider it goes to: never a maker's price for a name routed elsewhere or with a prefix lllm does not know", () => {
    // Sent whole to an OpenAI-compatible server (OPENAI_BASE_URL): not Anthropic's price, whatever the name says.
    expect(table.priceOf("anthropc/claude-sonnet-4-5")).toBeUndefined();
    // Without its prefix a Claude name goes to OpenAI's route; through Groq, OpenAI's model is not at OpenAI's price.
    expect(table.priceOf("claude-sonnet-4-5")).toBeUndefined();
    expect(table.priceOf("groq/gpt-4o")).toBeUndefined();
    expect(table.priceOf("deepseek/deepseek-chat")).toBeDefined();
    // What the project's prices say holds wherever the name goes: as written, then without its prefix.
    const custom = PriceTable.load({ "anthropc/claude-sonnet-4-5": { input: 1, output: 1 }, "llama-3-8b": { input: 0.1, output: 0.1 } });
    expect(custom.priceOf("anthropc/claude-sonnet-4-5")).toEqual({ input: 1, output: 1 });
    expect(custom.priceOf("groq/llama-3-8b")).toEqual({ input: 0.1, output: 0.1 });
  });

  it("prices cached prompt tokens at the cached rate; an unknown model costs null, never 0; a scripted one nothing", () => {
    expect(table.costOf("gpt-4o", { promptTokens: 1_000_000, cachedPromptTokens: 400_000, completionTokens: 100_000 })).toBeCloseTo(0.6 * 2.5 + 0.4 * 1.25 + 0.1 * 10, 10);
    expect(table.costOf("my-local-model", { promptTokens: 10, completionTokens: 10 })).toBeNull();
    // A scripted model calls no provider: the run's total says $0, as its agents' lines and its budget do.
    expect(table.costOf("scripted:turns.yaml", { promptTokens: 50, completionTokens: 10 })).toBe(0);
  });

  it("prices Anthropic's cache writes at 1.25 times the input rate (its 5-minute cache), not at the input rate", () => {
    // claude-haiku-4-5: input 1.0, cached_input 0.1, output 5.0 dollars per million tokens.
    const tokens = { promptTokens: 1_000_000, cachedPromptTokens: 200_000, cacheWritePromptTokens: 300_000, completionTokens: 100_000 };
    const expected = 0.5 * 1.0 + 0.2 * 0.1 + 0.3 * 1.25 + 0.1 * 5.0;
    expect(table.costOf("anthropic/claude-haiku-4-5", tokens)).toBeCloseTo(expected, 10);
    // The run's tally (what `run --json`, the run log and batch report) adds up the same price.
    const tally = new RunTally(table);
    const reply = { type: "model_reply" as const, agent: "a", round: 1, text: "", toolCalls: [], usage: tokens, model: "anthropic/claude-haiku-4-5" };
    tally.add(reply);
    tally.add(reply);
    expect(tally.cost).toBeCloseTo(2 * expected, 10);
    // A project's own input price is the base of the cache-write price too.
    const custom = PriceTable.load({ "claude-haiku-4-5": { input: 2, output: 5 } });
    expect(custom.costOf("anthropic/claude-haiku-4-5", { promptTokens: 1_000_000, cacheWritePromptTokens: 1_000_000, completionTokens: 0 })).toBe(2.5);
  });

  it("`prices:` in the project settings add and replace models", () => {
    const custom = PriceTable.load({ "my-local-model": { input: 1, output: 2 }, "gpt-4o": { input: 0, output: 0 } });
    expect(custom.costOf("my-local-model", { promptTokens: 1_000_000, cachedPromptTokens: 500_000, completionTokens: 1_000_000 })).toBe(3);
    expect(custom.costOf("gpt-4o", { promptTokens: 5, completionTokens: 5 })).toBe(0);
  });
});

describe("the run store's redactor", () => {
  it("replaces a key in every encoding it can take in stored text", () => {
    const key = "sk-live-abc+/def=123";
    const redactor = redactorOf(environmentSecrets({ OPENAI_API_KEY: key, HOME: "/home/someone", SHORT_TOKEN: "abc", XDG_SESSION_DESKTOP: "someone" }));
    const base64 = Buffer.from(key).toString("base64");
    const text = [key, JSON.stringify({ k: key }), encodeURIComponent(key), base64, Buffer.from(key).toString("base64url")].join(" | ");
    const redacted = redactor.redact(text);
    expect(redacted).not.toContain("abc+/def");
    expect(redacted).not.toContain(base64.replace(/=+$/, ""));
    expect(redacted).not.toContain(encodeURIComponent(key));
    expect(redacted.split("[redacted]")).toHaveLength(6);
    // Not a secret by its name, and too short to replace everywhere.
    expect(redactor.redact("/home/someone abc")).toBe("/home/someone abc");
  });
});

describe("parseAge", () => {
  it("reads 90s, 15m, 2h, 30d, 1w and refuses anything else", () => {
    expect(parseAge("90s")).toBe(90_000);
    expect(parseAge("2h")).toBe(7_200_000);
    expect(parseAge("30d")).toBe(30 * 86_400_000);
    expect(parseAge("1w")).toBe(604_800_000);
    expect(parseAge("2 hours")).toBeUndefined();
    expect(parseAge("")).toBeUndefined();
  });
});

describe("ScriptedModel with recorded tool results", () => {
  const turns = [{ tool_calls: [{ id: "c1", name: "stamp", arguments: { word: "a" }, result: "v1:a" }] }, "done"];

  it("goes on when the tools answer as recorded", async () => {
    const model = new ScriptedModel(turns);
    await model.generate({ messages: [{ role: "user", content: "x" }] });
    const reply = await model.generate({ messages: [{ role: "user", content: "x" }, { role: "assistant", content: null, toolCalls: [{ id: "c1", name: "stamp", arguments: '{"word":"a"}' }] }, { role: "tool", toolCallId: "c1", content: "v1:a" }] });
    expect(reply.message.content).toBe("done");
  });

  it("names the turn whose tool result changed", async () => {
    const model = new ScriptedModel(turns);
    await model.generate({ messages: [{ role: "user", content: "x" }] });
    await expect(model.generate({ messages: [{ role: "tool", toolCallId: "c1", content: "v2:a" }] })).rejects.toThrow(/diverged at turn 1: its tool call stamp\(\{"word":"a"\}\) now returns "v2:a", but the recorded run got "v1:a"/);
  });

  it("rejects a result that is not text", () => {
    expect(() => new ScriptedModel([{ tool_calls: [{ name: "stamp", result: 3 as unknown as string }] }])).toThrow(/result must be a string/);
  });
});
