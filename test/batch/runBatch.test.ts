import { describe, expect, it } from "vitest";
import { AdaptiveConcurrency } from "../../src/batch/AdaptiveConcurrency.js";
import type { BatchItem, BatchResult } from "../../src/batch/BatchItem.js";
import type { BatchOutput } from "../../src/batch/BatchOutput.js";
import { runBatch } from "../../src/batch/runBatch.js";

async function* items(count: number): AsyncGenerator<BatchItem> {
  for (let index = 0; index < count; index += 1) yield { id: String(index + 1), index, input: `q${index + 1}`, vars: {} };
}

const output = (): BatchOutput => ({ done: new Map(), held: 0, write: () => undefined, skip: () => undefined }) as unknown as BatchOutput;

describe("runBatch", () => {
  it("--max-cost: an item whose cost is unknown (a model chosen at run time, without a price) stops the batch", async () => {
    const started: string[] = [];
    const stats = await runBatch({
      items: items(10),
      output: output(),
      concurrency: new AdaptiveConcurrency(1),
      stopStarting: new AbortController().signal,
      maxCost: 5,
      runItem: async (item): Promise<BatchResult> => {
        started.push(item.id);
        return { id: item.id, status: "ok", output: "x", error: null, usage: { promptTokens: 10, completionTokens: 1, totalTokens: 11, llmCalls: 1 }, cost: item.id === "3" ? null : 0.01, runId: null, durationMs: 1 };
      },
    });
    expect(started).toEqual(["1", "2", "3"]);
    expect(stats).toMatchObject({ stoppedBy: "unpriced", unpricedItem: "3", ok: 3 });
  });

  it("counts what was spent before towards the budgets: nothing starts when it is already reached", async () => {
    const started: string[] = [];
    const stats = await runBatch({
      items: items(3),
      output: output(),
      concurrency: new AdaptiveConcurrency(2),
      stopStarting: new AbortController().signal,
      maxTokens: 1000,
      spentBefore: { promptTokens: 900, completionTokens: 100, cost: 0 },
      runItem: async (item) => {
        started.push(item.id);
        throw new Error("not expected");
      },
    });
    expect(started).toEqual([]);
    expect(stats.stoppedBy).toBe("budget");
  });
});
