import { setMaxListeners } from "node:events";
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import type { Worker } from "bullmq";
import { approveAll, approveNone } from "../../codeaction/approval.js";
import { configDigest } from "../../store/startRunLog.js";
import { replySizeBytes } from "../../config/index.js";
import { prepareTactic, type PreparedTactic } from "../../tactics/prepareTactic.js";
import { AdaptiveConcurrency } from "../AdaptiveConcurrency.js";
import { batchModelFactory } from "../batchModelFactory.js";
import { ProviderGate } from "../ProviderGate.js";
import { runBatchItem } from "../runBatchItem.js";
import { BATCHES_KEY, batchKey, loadBullmq, queueConnection, queueName, type BatchAnnouncement, type QueueItem } from "./queueConnection.js";

export interface RunWorkerOptions {
  url: string;
  /** Items this worker runs at once (over all batches). */
  concurrency: number;
  /** Resolves a tactic the batch names (a file or a package ref) with this worker's packages. */
  resolveTactic: (announcement: BatchAnnouncement) => Promise<string>;
  /** Aborted on the first Ctrl-C: take no more items, finish the running ones. */
  stop: AbortSignal;
  /** Aborted on the second: cancel the running ones (their jobs go back to the queue). */
  cancel: AbortSignal;
  log?: boolean;
  say: (message: string) => void;
  warn: (message: string) => void;
}

/** How long a job's lock lasts without renewal: a worker killed mid-item gives it back after this. */
function lockMs(): number {
  const fromEnv = Number(process.env.LLLM_QUEUE_LOCK_MS);
  return Number.isFinite(fromEnv) && fromEnv >= 500 ? fromEnv : 30_000;
}

/**
 * `lllm worker`: watch Redis for batches, join each one whose tactic this machine has with the same digest (and
 * refuse the others, saying why, to the producer too), and run their items. Returns when `stop` aborts, after
 * the running items finished.
 */
export async function runWorker(options: RunWorkerOptions): Promise<{ ran: number }> {
  const connection = queueConnection(options.url);
  // Each running item listens on the cancel signal and (its run log) on process exit: many at once is by design.
  setMaxListeners(options.concurrency * 4 + 20, options.cancel);
  process.setMaxListeners(process.getMaxListeners() + options.concurrency * 2);
  const { Worker } = await loadBullmq();
  const { Redis } = await import("ioredis");
  const redis = new Redis(options.url, { maxRetriesPerRequest: null });
  redis.on("error", () => undefined); // ioredis reconnects by itself; the loop below retries its commands
  const joined = new Map<string, { worker: Worker; missingSince?: number }>();
  const refused = new Set<string>();
  const gate = new ProviderGate();
  const concurrency = new AdaptiveConcurrency(options.concurrency);
  const me = `${hostname()}:${process.pid}`;
  let ran = 0;

  const join = async (batchId: string): Promise<void> => {
    const text = await redis.hget(batchKey(batchId), "announcement");
    if (text === null) return;
    const announcement = JSON.parse(text) as BatchAnnouncement;
    let prepared: PreparedTactic;
    try {
      prepared = await prepareTactic(await options.resolveTactic(announcement), { ...(announcement.model ? { model: announcement.model } : {}), ...(announcement.packages.length > 0 ? { packages: announcement.packages.filter((dir) => existsSync(dir)) } : {}) });
    } catch (error) {
      return refuse(batchId, `this worker cannot load the tactic \`${announcement.tactic}\`: ${(error as Error).message}`);
    }
    const digest = configDigest(prepared);
    if (digest !== announcement.digest) {
      return refuse(batchId, `its tactic \`${announcement.tactic}\` differs from this worker's copy (digest ${announcement.digest}, here ${digest}); give every worker the same tactic and packages`);
    }
    const maxReplyBytes = replySizeBytes(prepared.settings.reply_size);
    const createModel = batchModelFactory({ gate, concurrency, signal: options.cancel, ...(announcement.timeout !== null ? { modelTimeout: announcement.timeout } : {}), ...(maxReplyBytes !== undefined ? { maxReplyBytes } : {}) });
    const worker = new Worker(
      queueName(batchId),
      async (job) => {
        const item = job.data as QueueItem;
        const result = await runBatchItem(item, {
          prepared,
          batchId,
          createModel,
          vars: announcement.vars,
          ...(announcement.maxSteps !== null ? { maxSteps: announcement.maxSteps } : {}),
          approve: announcement.approve === "all" ? approveAll : approveNone,
          signal: options.cancel,
          ...(options.log !== undefined ? { log: options.log } : {}),
          warn: options.warn,
        });
        ran += 1;
        return result;
      },
      { connection, concurrency: options.concurrency, lockDuration: lockMs(), stalledInterval: Math.max(250, Math.floor(lockMs() / 2)), maxStalledCount: 5 },
    );
    worker.on("error", () => undefined); // connection errors during a Redis restart: BullMQ reconnects
    joined.set(batchId, { worker });
    options.say(`lllm worker: joined batch ${batchId} (${announcement.tactic})`);
  };

  const refuse = async (batchId: string, message: string): Promise<void> => {
    refused.add(batchId);
    options.warn(`batch ${batchId} refused: ${message}`);
    await redis.hset(batchKey(batchId), `refused:${me}`, message);
  };

  while (!options.stop.aborted) {
    try {
      const batches = new Set(await redis.smembers(BATCHES_KEY));
      for (const batchId of batches) if (!joined.has(batchId) && !refused.has(batchId)) await join(batchId);
      // A batch gone from Redis for a while is over (a restart empties Redis too: the producer announces it again).
      for (const [batchId, entry] of joined) {
        if (batches.has(batchId)) delete entry.missingSince;
        else if (entry.missingSince === undefined) entry.missingSince = Date.now();
        else if (Date.now() - entry.missingSince > 10_000) {
          joined.delete(batchId);
          await entry.worker.close();
        }
      }
    } catch {
      // Redis away (restarting): try again on the next round.
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 500);
      options.stop.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
  // Finish the running items (a second Ctrl-C cancels them: their jobs fail and another worker retries them).
  await Promise.allSettled([...joined.values()].map((entry) => entry.worker.close()));
  redis.disconnect();
  return { ran };
}
