import { describe, expect, it } from "vitest";
import { InterruptedError, RunLimitError } from "../../src/errors.js";
import { ToolJournal, type ToolResults } from "../../src/store/journal/ToolJournal.js";
import { FunctionCall, FunctionTool, toolResult } from "../../src/tools/index.js";
import { asToolResult } from "../../src/tools/toolResult.js";

function memoryResults(): ToolResults & { kept: Map<string, string> } {
  const kept = new Map<string, string>();
  return { kept, toolResultsOf: (itemKey) => new Map([...kept].filter(([key]) => key.startsWith(`${itemKey}/`))), keepToolResult: (key, outcome) => void kept.set(key, JSON.stringify(outcome)) };
}

describe("ToolJournal: an item run again from its start replays its tool calls", () => {
  it("runs each call once; a later attempt gets the same outcome (text, error, rich result) ", async () => {
    const results = memoryResults();
    let runs = 0;
    const tool = new FunctionTool({
      name: "lookup",
      description: "Looks up.",
      properties: { city: { type: "string" } },
      run: ({ city }) => {
        runs += 1;
        if (city === "nowhere") throw new Error("no such city");
        return city === "Paris" ? toolResult({ content: [{ type: "text", text: "sunny" }], structuredContent: { sky: "sunny" } }) : `${String(city)}: rain`;
      },
    });
    const attempt = async (): Promise<FunctionCall[]> => {
      const wrapped = new ToolJournal({ results, scope: "iabc" }).wrap(tool, "bot");
      const calls = [];
      for (const [id, city] of [["c1", "Paris"], ["c2", "Oslo"], ["c3", "nowhere"]] as const) {
        calls.push(await wrapped.call(new FunctionCall({ id, name: "lookup", arguments: { city } })));
      }
      return calls;
    };
    const first = await attempt();
    expect(runs).toBe(3);
    const second = await attempt();
    expect(runs).toBe(3);
    expect(second.map((call) => [call.resultStr, call.error])).toEqual(first.map((call) => [call.resultStr, call.error]));
    expect(second[2]!.error).toContain("no such city");
    // A rich result is one again: its images would still reach a model that takes them.
    expect(asToolResult(second[0]!.result)?.structuredContent).toEqual({ sky: "sunny" });
  });

  it("keeps no outcome of a call cut short by the run's stop (it failed once the run was stopped)", async () => {
    const results = memoryResults();
    const controller = new AbortController();
    const tool = new FunctionTool({ name: "slow", description: "Slow.", run: () => { controller.abort(); throw new Error("aborted"); } });
    await new ToolJournal({ results, scope: "iabc" }).wrap(tool, "bot").call(new FunctionCall({ id: "c1", name: "slow" }), { signal: controller.signal });
    expect(results.kept.size).toBe(0);
  });

  it("keeps no outcome of a call that answered a signal's stop with a value of its own (its sample failed: a fallback)", async () => {
    const results = memoryResults();
    const controller = new AbortController();
    const sample = (): Promise<never> => {
      controller.abort(new InterruptedError("interrupted", "interrupted by the user"));
      return Promise.reject(new Error("the model call was cancelled"));
    };
    const tool = new FunctionTool({ name: "sums", description: "Sums up.", run: async (_args, context) => context.sample!({ messages: [{ role: "user", content: "sum up" }] }).then(() => "summed", () => "no summary (cancelled)") });
    const done = await new ToolJournal({ results, scope: "iabc" }).wrap(tool, "bot").call(new FunctionCall({ id: "c1", name: "sums" }), { signal: controller.signal, sample });
    expect(done.result).toBe("no summary (cancelled)");
    expect(results.kept.size).toBe(0);
  });

  it("keeps no outcome of a call whose question to the user the stop cancelled", async () => {
    const results = memoryResults();
    const controller = new AbortController();
    const elicit = (): Promise<{ action: "cancel" }> => {
      controller.abort(new InterruptedError("interrupted", "interrupted by the user"));
      return Promise.resolve({ action: "cancel" });
    };
    const tool = new FunctionTool({ name: "asks", description: "Asks.", run: async (_args, context) => ((await context.elicit!({ message: "Go?", requestedSchema: { type: "object", properties: {} } })).action === "accept" ? "done" : "the user cancelled") });
    await new ToolJournal({ results, scope: "iabc" }).wrap(tool, "bot").call(new FunctionCall({ id: "c1", name: "asks" }), { signal: controller.signal, elicit });
    expect(results.kept.size).toBe(0);
  });

  it("keeps the outcome of a call that ended with its result after a signal's stop (its tool does not heed the signal)", async () => {
    const results = memoryResults();
    const controller = new AbortController();
    const answered = (): Promise<{ action: "accept"; content: { go: boolean } }> => Promise.resolve({ action: "accept", content: { go: true } });
    const tool = new FunctionTool({
      name: "deaf",
      description: "Works on.",
      run: async (_args, context) => {
        // Its question was answered before the stop; the stop comes while it works, and it ends anyway.
        await context.elicit!({ message: "Go?", requestedSchema: { type: "object", properties: { go: { type: "boolean" } } } });
        controller.abort(new InterruptedError("interrupted", "interrupted by the user"));
        await new Promise((resolve) => setTimeout(resolve, 5));
        return "worked";
      },
    });
    await new ToolJournal({ results, scope: "iabc" }).wrap(tool, "bot").call(new FunctionCall({ id: "c1", name: "deaf" }), { signal: controller.signal, elicit: answered });
    expect([...results.kept.values()].map((outcome) => (JSON.parse(outcome) as { result: string }).result)).toEqual(["worked"]);
  });

  it("keeps the outcome of a call that ended on its own while a limit stopped the run (reached by a call beside it)", async () => {
    const results = memoryResults();
    const controller = new AbortController();
    const tool = new FunctionTool({ name: "quick", description: "Quick.", run: () => { controller.abort(new RunLimitError("limit_max_tool_calls", "max_tool_calls reached", { limit: "max_tool_calls", value: 1, spent: 1 })); return "done anyway"; } });
    await new ToolJournal({ results, scope: "iabc" }).wrap(tool, "bot").call(new FunctionCall({ id: "c1", name: "quick" }), { signal: controller.signal });
    expect([...results.kept.values()].map((outcome) => (JSON.parse(outcome) as { result: string }).result)).toEqual(["done anyway"]);
  });
});
