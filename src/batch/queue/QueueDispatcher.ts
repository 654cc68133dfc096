import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { InterruptedError } from "../../errors.js";
import { failedBatchResult, type BatchItem, type BatchResult } from "../BatchItem.js";
import { BATCHES_KEY, batchKey, jobIdOf, type BatchAnnouncement, type QueueItem } from "./queueConnection.js";

interface Pending {
  item: QueueItem;
  resolve: (result: BatchResult) => void;
  reject: (error: unknown) => void;
}

export interface QueueDispatcherOptions {
  queue: Queue;
  /** For the announcement (plain Redis commands). */
  redis: Redis;
  announcement: BatchAnnouncement;
  /** Aborted on a second Ctrl-C: pending items are cancelled and the jobs left in the queue removed. */
  cancel: AbortSignal;
  /** A worker's refusal (a different tactic), told once per worker. */
  warn: (message: string) => void;
  /** Told after the batch is removed from Redis (to close the Redis client). */
  onClosed?: () => void;
  /** How often finished jobs are collected. */
  pollMs?: number;
  /** How often the batch is announced again and lost jobs (a Redis restart) are enqueued again. */
  checkMs?: number;
}

/** How soon to poll again after a poll that collected finished jobs. */
const BUSY_POLL_MS = 5;

/** Attempts of a job: a worker cancelled mid-item (its second Ctrl-C) fails the job, and another worker retries. */
const JOB_ATTEMPTS = 3;

/**
 * The producer's side of a queued batch: `run(item)` enqueues the item as a job and resolves with its result when
 * a worker has finished it. Finished jobs are collected by polling (results survive the producer reconnecting,
 * unlike pub/sub events) and removed; a result is delivered once per item, however many times a job ran. Jobs lost
 * with a Redis restart (no persistence) are enqueued again.
 */
export class QueueDispatcher {
  readonly #options: QueueDispatcherOptions;
  readonly #pending = new Map<string, Pending>();
  readonly #told = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #lastCheck = 0;
  #closed = false;
  #polling: Promise<void> = Promise.resolve();

  constructor(options: QueueDispatcherOptions) {
    this.#options = options;
    options.cancel.addEventListener("abort", () => this.#cancelAll(), { once: true });
  }

  async start(): Promise<void> {
    await this.#announce();
    this.#schedule();
  }

  run(item: BatchItem): Promise<BatchResult> {
    const data: QueueItem = { id: item.id, index: item.index, input: item.input, vars: item.vars };
    return new Promise<BatchResult>((resolve, reject) => {
      this.#pending.set(jobIdOf(item.id), { item: data, resolve, reject });
      this.#add(data).catch(reject);
    });
  }

  async #add(item: QueueItem): Promise<void> {
    await this.#options.queue.add("item", item, { jobId: jobIdOf(item.id), attempts: JOB_ATTEMPTS, removeOnComplete: false, removeOnFail: false });
  }

  /**
   * Poll again soon after a poll that found finished jobs (more are likely finishing: a result collected late keeps
   * its slot busy and the workers waiting for the next item), and every `pollMs` while nothing finishes.
   */
  #schedule(delayMs = this.#options.pollMs ?? 100): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      let found = 0;
      this.#polling = this.#poll()
        .then((count) => {
          found = count;
        })
        .catch(() => undefined) // Redis away for a moment: the next poll tries again
        .finally(() => this.#schedule(found > 0 ? BUSY_POLL_MS : undefined));
    }, delayMs);
  }

  /** Collect the finished jobs: resolve their items, then remove them from Redis. Returns how many were found. */
  async #poll(): Promise<number> {
    const { queue } = this.#options;
    const collected: Array<Promise<unknown>> = [];
    const jobs = await queue.getJobs(["completed", "failed"], 0, 499, true);
    for (const job of jobs) {
      if (!job?.id) continue;
      const pending = this.#pending.get(job.id);
      const finished = job.finishedOn !== undefined && (job.returnvalue !== undefined || (job.attemptsMade ?? 0) >= JOB_ATTEMPTS);
      if (!finished) continue;
      if (pending) {
        this.#pending.delete(job.id);
        pending.resolve(job.returnvalue ? (job.returnvalue as BatchResult) : failedResult(pending.item, job.failedReason));
      }
      // All at once (one round trip's wait, not one per job): each removal is a script of its own on the server.
      collected.push(job.remove().catch(() => undefined));
    }
    await Promise.all(collected);
    if (Date.now() - this.#lastCheck >= (this.#options.checkMs ?? 2000)) {
      this.#lastCheck = Date.now();
      await this.#announce();
      await this.#tellRefusals();
      // A Redis restart without persistence loses every job: enqueue again what is still pending.
      for (const [jobId, pending] of this.#pending) {
        if ((await queue.getJobState(jobId)) === "unknown" && this.#pending.has(jobId)) await this.#add(pending.item);
      }
    }
    return jobs.length;
  }

  /** Tell the workers about the batch (again after a Redis restart; the writes are idempotent). */
  async #announce(): Promise<void> {
    const client = this.#options.redis;
    const { announcement } = this.#options;
    await client.hset(batchKey(announcement.batchId), "announcement", JSON.stringify(announcement));
    await client.sadd(BATCHES_KEY, announcement.batchId);
  }

  async #tellRefusals(): Promise<void> {
    const client = this.#options.redis;
    const fields = await client.hgetall(batchKey(this.#options.announcement.batchId));
    for (const [field, message] of Object.entries(fields)) {
      if (!field.startsWith("refused:") || this.#told.has(field)) continue;
      this.#told.add(field);
      this.#options.warn(`worker ${field.slice("refused:".length)} refuses this batch: ${message}`);
    }
  }

  #cancelAll(): void {
    for (const pending of this.#pending.values()) pending.reject(new InterruptedError("interrupted", "cancelled by the user"));
    this.#pending.clear();
  }

  /** Stop polling and remove the batch from Redis (its queue, jobs and announcement). */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#polling;
    const { queue, announcement } = this.#options;
    try {
      const client = this.#options.redis;
      await client.srem(BATCHES_KEY, announcement.batchId);
      await client.del(batchKey(announcement.batchId));
      await queue.obliterate({ force: true });
    } finally {
      await queue.close();
      this.#options.onClosed?.();
    }
  }
}

function failedResult(item: QueueItem, reason: string | undefined): BatchResult {
  return failedBatchResult(item.id, { code: "worker_failed", message: `the workers could not run this item: ${reason ?? "unknown reason"}` });
}
