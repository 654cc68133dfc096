import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { AdaptiveConcurrency } from "../../src/batch/AdaptiveConcurrency.js";
import type { BatchItem, BatchResult } from "../../src/batch/BatchItem.js";
import { readFileSync } from "node:fs";
import path from "node:path";
import { BatchOutput } from "../../src/batch/BatchOutput.js";
import { runBatch } from "../../src/batch/runBatch.js";
import { removeTempDirs, tempDir } from "./batchTestHelpers.js";

afterEach(() => removeTempDirs());

// A full collection on demand, to read what the batch really keeps (not what the collector has yet to free).
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

const result = (id: string): BatchResult => ({ id, status: "ok", output: "answer", error: null, usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2, llmCalls: 1 }, cost: 0, runId: null, durationMs: 0 });

async function* lines(count: number): AsyncGenerator<BatchItem> {
  for (let index = 0; index < count; index += 1) yield { id: String(index + 1), index, input: `q${index + 1}`, vars: {} };
}

describe("runBatch memory", () => {
  it("keeps nothing per finished item: the heap after 150,000 items is the heap after 20,000", async () => {
    const output = { done: new Map(), held: 0, write: () => undefined, skip: () => undefined } as unknown as BatchOutput;
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

  it("--ordered: a slow first item does not make the batch hold every later result; they wait in a bounded window", async () => {
    const file = path.join(tempDir(), "out.jsonl");
    const output = await BatchOutput.open({ file, ordered: true, retryFailed: false });
    let started = 0;
    let startedWhileFirstRuns = 0;
    let releaseFirst!: () => void;
    const first = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstDone = false;
    // The first item ends once nothing new has started for 20 turns of the event loop (the scheduler is holding
    // back), or once the dataset is exhausted; every other item ends on the next turn.
    let quietTurns = 0;
    let lastStarted = -1;
    const watch = (): void => {
      if (firstDone) return;
      quietTurns = started === lastStarted ? quietTurns + 1 : 0;
      lastStarted = started;
      if (quietTurns >= 20) releaseFirst();
      else setImmediate(watch);
    };
    setImmediate(watch);
    const stats = await runBatch({
      items: lines(2_000),
      output,
      concurrency: new AdaptiveConcurrency(8),
      stopStarting: new AbortController().signal,
      uniqueIds: true,
      maxHeldLines: 50,
      runItem: async (item) => {
        started += 1;
        if (!firstDone) startedWhileFirstRuns = started;
        if (item.index === 0) {
          await first;
          firstDone = true;
        } else await new Promise((resolve) => setImmediate(resolve));
        return result(item.id);
      },
    });
    output.close();
    expect(stats.ok).toBe(2_000);
    // The first item, at most 50 lines waiting for it, and the 8 slots.
    expect(startedWhileFirstRuns).toBeLessThanOrEqual(1 + 50 + 8);
    const ids = readFileSync(file, "utf8").trim().split("\n").map((text) => (JSON.parse(text) as { id: string }).id);
    expect(ids).toEqual(Array.from({ length: 2_000 }, (_, index) => String(index + 1)));
  }, 120_000);
});
