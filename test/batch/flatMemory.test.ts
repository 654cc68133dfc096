import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { AdaptiveConcurrency } from "../../src/batch/AdaptiveConcurrency.js";
import type { BatchItem, BatchResult } from "../../src/batch/BatchItem.js";
import type { BatchOutput } from "../../src/batch/BatchOutput.js";
import { runBatch } from "../../src/batch/runBatch.js";

// A full collection on demand, to read what the batch really keeps (not what the collector has yet to free).
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

const result = (id: string): BatchResult => ({ id, status: "ok", output: "answer", error: null, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, llm_calls: 1 }, cost: 0, run_id: null, duration_ms: 0 });

async function* lines(count: number): AsyncGenerator<BatchItem> {
  for (let index = 0; index < count; index += 1) yield { id: String(index + 1), index, input: `q${index + 1}`, vars: {} };
}

describe("runBatch memory", () => {
  it("keeps nothing per finished item: the heap after 150,000 items is the heap after 20,000", async () => {
    const output = { done: new Map(), write: () => undefined, skip: () => undefined } as unknown as BatchOutput;
    const heapAt = new Map<number, number>();
    const stats = await runBatch({
      items: lines(150_000),
      output,
      concurrency: new AdaptiveConcurrency(32),
      stopStarting: new AbortController().signal,
      uniqueIds: true,
      // Each item finishes on a later turn of the event loop, as a model call does.
      runItem: (item) => new Promise((resolve) => setImmediate(() => resolve(result(item.id)))),
      onResult: (_result, live) => {
        if (live.ok !== 20_000 && live.ok !== 150_000) return;
        collectGarbage();
        heapAt.set(live.ok, process.memoryUsage().heapUsed);
      },
    });
    expect(stats.ok).toBe(150_000);
    const grownMb = (heapAt.get(150_000)! - heapAt.get(20_000)!) / 1024 / 1024;
    // Before the fix every wait for a free slot left reactions on long-lived promises: about 50 MB here.
    expect(grownMb).toBeLessThan(5);
  }, 120_000);
});
