import { InterruptedError } from "../errors.js";
import type { AdaptiveConcurrency } from "./AdaptiveConcurrency.js";
import { failedBatchResult, type BatchItem, type BatchResult } from "./BatchItem.js";
import type { BatchOutput } from "./BatchOutput.js";

/** Counts of a batch so far (the progress line and the summary read them). */
export interface BatchStats {
  ok: number;
  failed: number;
  /** Already done in --out (not run again); `skippedFailed` of them had failed. */
  skipped: number;
  skippedFailed: number;
  inFlight: number;
  /** Items cancelled by a second Ctrl-C: not written, a rerun runs them. */
  cancelled: number;
  promptTokens: number;
  completionTokens: number;
  /** Dollars, over the items whose cost is known. */
  cost: number;
  /** Items whose model has no known price. */
  costUnknown: number;
  startedAt: number;
  /** Why the batch stopped starting items before the end of the dataset. */
  stoppedBy?: "interrupted" | "budget" | "fail_fast";
}

export interface RunBatchOptions {
  items: AsyncIterable<BatchItem>;
  output: BatchOutput;
  concurrency: AdaptiveConcurrency;
  runItem: (item: BatchItem) => Promise<BatchResult>;
  /** Aborted on the first Ctrl-C: start no more items; the running ones finish. */
  stopStarting: AbortSignal;
  failFast?: boolean;
  /** `--max-cost` (dollars) and `--max-tokens`: once reached, start no more items. */
  maxCost?: number;
  maxTokens?: number;
  /** Given the live counts once, at the start (the progress line and the Ctrl-C message read them). */
  onStart?: (stats: BatchStats) => void;
  /** Told after each item (the progress line). */
  onResult?: (result: BatchResult, stats: BatchStats) => void;
  /**
   * With --ordered, how many finished lines may wait in memory for an earlier item before no new item starts (one
   * slow item must not make the batch hold every later result). Default 10,000.
   */
  maxHeldLines?: number;
  /** The dataset's ids are unique by construction (text lines: line numbers): duplicates need not be looked for. */
  uniqueIds?: boolean;
  /** Told once when --max-cost meets an item of unknown cost. */
  warn?: (message: string) => void;
}

/**
 * Run the items of a dataset, at most `concurrency.limit` at once, pulling the next item only when a slot is free
 * (so memory stays flat), and write each result as it finishes. Items already in the output are skipped. An item's
 * failure is a result; the batch stops early only on Ctrl-C, a budget, or a failure with --fail-fast.
 */
export async function runBatch(options: RunBatchOptions): Promise<BatchStats> {
  const stats: BatchStats = { ok: 0, failed: 0, skipped: 0, skippedFailed: 0, inFlight: 0, cancelled: 0, promptTokens: 0, completionTokens: 0, cost: 0, costUnknown: 0, startedAt: Date.now() };
  const { output, concurrency } = options;
  const maxHeld = options.maxHeldLines ?? 10_000;
  options.onStart?.(stats);
  let running = 0;
  /** Wakes the scheduler waiting for a free slot: an item finished, or the user pressed Ctrl-C. */
  let wake: (() => void) | undefined;
  const wakeUp = (): void => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  // Text lines have their line numbers as ids, unique by construction: no need to remember them (memory stays
  // flat however long the dataset is). Other formats' ids come from the data and are checked for duplicates.
  const seen = options.uniqueIds ? undefined : new Set<string>();
  let warnedCost = false;
  const stopReason = (): BatchStats["stoppedBy"] => {
    if (options.stopStarting.aborted) return "interrupted";
    if (stats.stoppedBy) return stats.stoppedBy;
    if (options.maxCost !== undefined && stats.cost >= options.maxCost) return "budget";
    if (options.maxTokens !== undefined && stats.promptTokens + stats.completionTokens >= options.maxTokens) return "budget";
    return undefined;
  };
  options.stopStarting.addEventListener("abort", wakeUp, { once: true });
  /** Settled when every started item has finished. */
  let drained: Promise<void> = Promise.resolve();
  let drainedResolve: (() => void) | undefined;
  /** An error out of recording a result: thrown from the scheduler once the running items are done. */
  let broken: { error: unknown } | undefined;

  const record = (item: BatchItem, result: BatchResult): void => {
    output.write(item.index, result);
    if (result.status === "ok") stats.ok += 1;
    else stats.failed += 1;
    stats.promptTokens += result.usage.promptTokens;
    stats.completionTokens += result.usage.completionTokens;
    if (result.cost === null) {
      if (result.usage.llmCalls > 0) stats.costUnknown += 1;
      if (options.maxCost !== undefined && result.usage.llmCalls > 0 && !warnedCost) {
        warnedCost = true;
        options.warn?.(`item ${result.id}: its model has no known price, so --max-cost does not count it (add the model's price under \`prices:\` in the project settings)`);
      }
    } else stats.cost += result.cost;
    if (result.status !== "ok" && options.failFast) stats.stoppedBy ??= "fail_fast";
    options.onResult?.(result, stats);
  };

  const start = (item: BatchItem): void => {
    stats.inFlight += 1;
    if (running === 0) drained = new Promise<void>((resolve) => (drainedResolve = resolve));
    running += 1;
    void options
      .runItem(item)
      .then(
        (result) => {
          if (result.status === "ok") concurrency.succeeded();
          record(item, result);
        },
        (error: unknown) => {
          if (error instanceof InterruptedError) stats.cancelled += 1;
          // runItem turns failures into results; anything else is a bug, still reported as this item's failure.
          else record(item, failedBatchResult(item.id, { code: "internal_error", message: error instanceof Error ? error.message : String(error) }));
        },
      )
      .catch((error: unknown) => {
        // Writing the result failed (a full disk): the batch stops with that error, as before any other item.
        broken ??= { error };
      })
      .finally(() => {
        stats.inFlight -= 1;
        running -= 1;
        if (running === 0) drainedResolve?.();
        wakeUp();
      });
  };

  const iterator = options.items[Symbol.asyncIterator]();
  let stoppedBy: BatchStats["stoppedBy"];
  try {
    for (;;) {
      // One waiter at a time, woken by the next item that finishes (not a race over every running item, whose
      // reactions would pile up on the long-lived promises, item after item).
      // With --ordered, also while too many finished lines wait for a slow earlier item (it is running: it ends).
      const full = (): boolean => running >= concurrency.limit || (running > 0 && output.held >= maxHeld);
      while (full() && stopReason() === undefined && !broken) await new Promise<void>((resolve) => (wake = resolve));
      if (broken) break;
      stoppedBy = stopReason();
      if (stoppedBy !== undefined) break;
      const next = await iterator.next();
      if (next.done) break;
      const item = next.value;
      const before = output.done.get(item.id);
      if (before !== undefined) {
        stats.skipped += 1;
        if (before !== "ok") stats.skippedFailed += 1;
        output.skip(item.index);
        continue;
      }
      if (seen?.has(item.id)) {
        record(item, failedBatchResult(item.id, { code: "batch_duplicate_id", message: `id \`${item.id}\` appears more than once in the dataset; this later item (number ${item.index + 1}) is not run` }));
        continue;
      }
      seen?.add(item.id);
      start(item);
    }
  } finally {
    options.stopStarting.removeEventListener("abort", wakeUp);
    await drained;
    await iterator.return?.(undefined);
  }
  if (broken) throw broken.error;
  // Only a stop that left items unstarted counts: a budget reached by the very last item stopped nothing.
  // A Ctrl-C while the last items ran still exits 130 (the CLI's signal handler sets it).
  if (stoppedBy !== undefined) stats.stoppedBy = stoppedBy;
  else delete stats.stoppedBy;
  return stats;
}
