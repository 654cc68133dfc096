import { InterruptedError } from "../errors.js";
import type { AdaptiveConcurrency } from "./AdaptiveConcurrency.js";
import { failedBatchResult, type BatchItem, type BatchResult, type BatchSpending } from "./BatchItem.js";
import type { BatchOutput } from "./BatchOutput.js";
import type { ParkedEntry, ParkedItems, ParkedRun } from "./ParkedItems.js";
import { roundCost } from "../util/roundCost.js";

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
  /** Later items whose id an earlier item of the dataset has: not run, not written (results are keyed by id). */
  duplicates: number;
  /** The first few of those ids (each once), for the warning. */
  duplicateIds: string[];
  /** With --max-cost: the first item whose cost was unknown (it stopped the batch). */
  unpricedItem?: string;
  startedAt: number;
  /** The scheduler is reading or starting items (not waiting for a free slot, not past the dataset's end). */
  pulling: boolean;
  /** Why the batch stopped starting items before the end of the dataset. */
  stoppedBy?: "interrupted" | "budget" | "fail_fast" | "unpriced";
  /** With `committedCost`: the dollars committed (not yet in any result) when --max-cost stopped the batch. */
  committedAtStop?: number;
}

export interface RunBatchOptions {
  items: AsyncIterable<BatchItem>;
  output: BatchOutput;
  concurrency: AdaptiveConcurrency;
  /**
   * Run an item; `parked` when it runs again after it parked. It may park (`ParkedRun`): it is then kept in `parked`
   * and run again when its answer comes, before any new item.
   */
  runItem: (item: BatchItem, parked?: ParkedEntry) => Promise<BatchResult | ParkedRun>;
  /**
   * Items waiting for a provider batch job as data (`lllm batch --provider-batch`): they do not hold a slot while
   * they wait. A budget stops new items, not these; a Ctrl-C or --fail-fast leaves them (cancelled: a rerun runs them).
   */
  parked?: ParkedItems;
  /** Aborted on the first Ctrl-C: start no more items; the running ones finish. */
  stopStarting: AbortSignal;
  failFast?: boolean;
  /**
   * `--max-cost` (dollars) and `--max-tokens`: once reached, start no more items. They count `spentBefore` too, so
   * that running the same command again under the same limit starts nothing. With `maxCost`, an item whose cost is
   * unknown (a model without a price) stops the batch (`stoppedBy: "unpriced"`): it cannot be held to the limit.
   */
  maxCost?: number;
  maxTokens?: number;
  spentBefore?: BatchSpending;
  /**
   * Dollars committed but not yet in any result (`--provider-batch`: requests submitted in jobs still running, turns
   * answered for items still running): `--max-cost` counts them as spent.
   */
  committedCost?: () => number;
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
}

/** How many duplicate ids the warning names. */
export const DUPLICATE_IDS_SHOWN = 5;

/**
 * Run the items of a dataset, at most `concurrency.limit` at once, pulling the next item only when a slot is free
 * (so memory stays flat), and write each result as it finishes. Items already in the output are skipped. An item's
 * failure is a result; the batch stops early only on Ctrl-C, a budget, or a failure with --fail-fast.
 */
export async function runBatch(options: RunBatchOptions): Promise<BatchStats> {
  const stats: BatchStats = { ok: 0, failed: 0, skipped: 0, skippedFailed: 0, inFlight: 0, cancelled: 0, promptTokens: 0, completionTokens: 0, cost: 0, costUnknown: 0, duplicates: 0, duplicateIds: [], startedAt: Date.now(), pulling: true };
  const spentBefore = options.spentBefore ?? { promptTokens: 0, completionTokens: 0, cost: 0 };
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
  const stopReason = (): BatchStats["stoppedBy"] => {
    if (options.stopStarting.aborted) return "interrupted";
    if (stats.stoppedBy) return stats.stoppedBy;
    if (options.maxCost !== undefined) {
      const committed = options.committedCost?.() ?? 0;
      if (spentBefore.cost + stats.cost + committed >= options.maxCost) {
        if (committed > 0) stats.committedAtStop = committed;
        return "budget";
      }
    }
    if (options.maxTokens !== undefined && spentBefore.promptTokens + spentBefore.completionTokens + stats.promptTokens + stats.completionTokens >= options.maxTokens) return "budget";
    return undefined;
  };
  options.stopStarting.addEventListener("abort", wakeUp, { once: true });
  const { parked } = options;
  if (parked) parked.onReady = wakeUp;
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
      // The models were checked for prices before the first item; one found only now (a tactic's code chose it)
      // cannot be held to --max-cost either.
      if (options.maxCost !== undefined && result.usage.llmCalls > 0 && stats.unpricedItem === undefined) {
        stats.unpricedItem = result.id;
        stats.stoppedBy ??= "unpriced";
      }
    } else stats.cost = roundCost(stats.cost + result.cost);
    if (result.status !== "ok" && options.failFast) stats.stoppedBy ??= "fail_fast";
    options.onResult?.(result, stats);
  };

  const start = (item: BatchItem, again?: ParkedEntry): void => {
    stats.inFlight += 1;
    if (running === 0) drained = new Promise<void>((resolve) => (drainedResolve = resolve));
    running += 1;
    const startedAt = again?.startedAt ?? performance.now();
    parked?.started(item.id);
    void options
      .runItem(item, again)
      .then(
        (result) => {
          if ("parked" in result) {
            const recordId = result.recordId ?? again?.recordId;
            parked!.park({ item, startedAt, ...(recordId !== undefined ? { recordId } : {}), ...(result.cost ? { cost: result.cost } : {}) });
            return;
          }
          parked?.settled(item.id);
          if (result.status === "ok") concurrency.succeeded();
          record(item, result);
        },
        (error: unknown) => {
          parked?.settled(item.id);
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
  /** No new item starts (the dataset's end, or a budget with parked items): only parked items run again. */
  let exhausted = false;
  try {
    for (;;) {
      // One waiter at a time, woken by the next item that finishes (not a race over every running item, whose
      // reactions would pile up on the long-lived promises, item after item).
      // With --ordered, also while too many finished lines wait for a slow earlier item (it is running: it ends).
      const full = (): boolean => running >= concurrency.limit || (running > 0 && output.held >= maxHeld);
      // Past the last new item: wait for a parked item's answer while any item runs or waits.
      const idle = (): boolean => exhausted && !parked?.hasReady && (running > 0 || (parked?.size ?? 0) > 0);
      const stopsNow = (): boolean => (exhausted ? options.stopStarting.aborted || (stats.stoppedBy !== undefined && stats.stoppedBy !== "budget") : stopReason() !== undefined);
      stats.pulling = false;
      while ((full() || idle()) && !stopsNow() && !broken) await new Promise<void>((resolve) => (wake = resolve));
      stats.pulling = true;
      if (broken) break;
      // Ctrl-C and --fail-fast stop at once; a budget stops only an item that would run (the rest of the dataset
      // may be done already, or duplicates: then nothing was stopped).
      const early = stopReason();
      if (early !== undefined && early !== "budget") {
        stoppedBy = early;
        break;
      }
      const again = parked?.next();
      if (again) {
        start(again.item, again);
        continue;
      }
      if (exhausted) break;
      const next = await iterator.next();
      if (next.done) {
        if (!parked) break;
        exhausted = true;
        continue;
      }
      const item = next.value;
      if (seen?.has(item.id)) {
        // Results and resume are keyed by id: a second item with the id could be neither written nor told apart.
        stats.duplicates += 1;
        if (stats.duplicateIds.length < DUPLICATE_IDS_SHOWN && !stats.duplicateIds.includes(item.id)) stats.duplicateIds.push(item.id);
        output.skip(item.index);
        continue;
      }
      seen?.add(item.id);
      const before = output.done.get(item.id);
      if (before !== undefined) {
        stats.skipped += 1;
        if (before !== "ok") stats.skippedFailed += 1;
        output.skip(item.index);
        continue;
      }
      stoppedBy = stopReason();
      if (stoppedBy === "budget" && parked) {
        // Parked items are paid for already (their jobs are submitted): they finish; no new item starts.
        exhausted = true;
        continue;
      }
      if (stoppedBy !== undefined) break;
      start(item);
    }
  } finally {
    stats.pulling = false;
    options.stopStarting.removeEventListener("abort", wakeUp);
    await drained;
    await iterator.return?.(undefined);
    // Stopped by a Ctrl-C or --fail-fast: the parked items are not written, as cancelled ones (a rerun runs them).
    if (parked) {
      stats.cancelled += parked.size;
      parked.onReady = undefined;
    }
  }
  if (broken) throw broken.error;
  // Only a stop that left items unstarted counts: a budget reached by the very last item stopped nothing.
  // A Ctrl-C while the last items ran still exits 130 (the CLI's signal handler sets it). An item of unknown cost
  // under --max-cost counts even when it was the last: the limit could not hold.
  if (stoppedBy !== undefined) stats.stoppedBy = stoppedBy;
  else if (stats.stoppedBy !== "unpriced") delete stats.stoppedBy;
  return stats;
}
