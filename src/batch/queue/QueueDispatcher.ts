import type { Queue } from "bullmq";
import { InterruptedError, type LllmError } from "../../errors.js";
import { failedBatchResult, type BatchItem, type BatchResult } from "../BatchItem.js";
import { batchesOnRedis, removeBatch } from "./batchesOnRedis.js";
import { aliveKey, BATCHES_KEY, batchKey, jobIdOf, loadBullmq, queueName, queueTimings, type BatchAnnouncement, type QueueItem, type QueueTimings } from "./queueConnection.js";
import { RedisLink } from "./RedisLink.js";
import { liveWorkers, WorkerWatch } from "./WorkerWatch.js";

interface Pending {
  item: QueueItem;
  resolve: (result: BatchResult) => void;
  reject: (error: unknown) => void;
}

export interface QueueDispatcherOptions {
  url: string;
  announcement: BatchAnnouncement;
  /** Aborted on a second Ctrl-C: pending items are cancelled and the jobs left in the queue removed. */
  cancel: AbortSignal;
  /** Warnings: Redis lost, a worker's refusal, no worker for a while. */
  warn: (message: string) => void;
  say: (message: string) => void;
  /**
   * The batch cannot go on (Redis unreachable for too long, or every live worker refuses it): the pending items are
   * cancelled (not written: a rerun runs them) and the caller stops starting items, then reports `failure`.
   */
  onFailure: (error: LllmError) => void;
  /** How often finished jobs are collected. */
  pollMs?: number;
  timings?: QueueTimings;
}

/** How soon to poll again after a poll that collected finished jobs. */
const BUSY_POLL_MS = 5;

/** How often `liveWorkers` looks for a first worker. */
const WORKER_LOOK_MS = 50;

/**
 * Attempts of a job that failed on a worker (its item cancelled where it could not be given back, as with Redis lost
 * mid-item): another worker retries it. A worker's own stop gives its items back without using an attempt.
 */
const JOB_ATTEMPTS = 3;

/**
 * The producer's side of a queued batch: `run(item)` enqueues the item as a job and resolves with its result when
 * a worker has finished it. Finished jobs are collected by polling (results survive the producer reconnecting,
 * unlike pub/sub events) and removed; a result is delivered once per item, however many times a job ran. Jobs lost
 * with a Redis restart (no persistence) are enqueued again. Every heartbeat, the batch says it is alive (a batch
 * whose producer is gone is removed by the workers) and looks at the workers: it warns when there is none for a
 * while, and fails when every live one refuses it. Closing removes every key of the batch.
 */
export class QueueDispatcher {
  readonly #options: QueueDispatcherOptions;
  readonly #link: RedisLink;
  readonly #queue: Queue;
  readonly #timings: QueueTimings;
  readonly #watch: WorkerWatch;
  readonly #pending = new Map<string, Pending>();
  #timer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #lastCheck = 0;
  #closed = false;
  #polling: Promise<void> = Promise.resolve();
  /** The items no worker has taken yet, as of the last heartbeat's look. */
  #waiting = 0;
  #failure: LllmError | undefined;

  private constructor(options: QueueDispatcherOptions, link: RedisLink, queue: Queue) {
    this.#options = options;
    this.#link = link;
    this.#queue = queue;
    this.#timings = options.timings ?? queueTimings();
    this.#watch = new WorkerWatch({ redis: link.client, batchId: options.announcement.batchId, shownUrl: link.shownUrl, noWorkerMs: this.#timings.noWorkerMs, warn: options.warn });
    options.cancel.addEventListener("abort", () => this.#cancelAll(new InterruptedError("interrupted", "cancelled by the user")), { once: true });
    link.failed.addEventListener("abort", () => this.#fail(link.failed.reason as LllmError), { once: true });
  }

  /**
   * Connect (saying at once when Redis cannot be reached, and failing after `LLLM_QUEUE_RECONNECT_MS`), remove the
   * batches of producers that are gone, announce this one and start collecting results.
   */
  static async open(options: QueueDispatcherOptions): Promise<QueueDispatcher> {
    const timings = options.timings ?? queueTimings();
    const link = await RedisLink.open({ url: options.url, reconnectMs: timings.reconnectMs, warn: options.warn, say: options.say });
    try {
      await link.ready(options.cancel);
    } catch (error) {
      link.close();
      throw error;
    }
    const { Queue } = await loadBullmq();
    // The link's client, shared: one connection, and the link decides how long to wait for Redis.
    const queue = new Queue(queueName(options.announcement.batchId), { connection: link.client });
    queue.on("error", () => undefined);
    const dispatcher = new QueueDispatcher({ ...options, timings }, link, queue);
    try {
      await link.guard(dispatcher.#start(), options.cancel);
    } catch (error) {
      await dispatcher.close();
      throw error;
    }
    return dispatcher;
  }

  async #start(): Promise<void> {
    // Batches whose producer is gone (killed with SIGKILL, its machine lost) before any worker removed them.
    for (const batch of await batchesOnRedis(this.#link.client)) if (!batch.alive) await removeBatch(this.#link.client, batch.batchId);
    await this.#announce();
    this.#lastCheck = Date.now();
    this.#schedule();
    // On a timer of its own: a slow poll (many results at once, a busy machine) must not make the batch look gone.
    this.#heartbeat = setInterval(() => {
      if (this.#link.isUp) void this.#link.client.set(aliveKey(this.#options.announcement.batchId), String(Date.now()), "PX", this.#timings.aliveMs).catch(() => undefined);
    }, this.#timings.heartbeatMs);
  }

  /**
   * How many workers are live, waiting up to `withinMs` for a first one (a worker started with the batch says it is
   * alive within its first heartbeat): 0 when none came or Redis is away; undefined when the batch ended meanwhile.
   */
  async liveWorkers(withinMs: number): Promise<number | undefined> {
    const deadline = Date.now() + withinMs;
    for (;;) {
      if (this.#closed || this.#failure || this.#options.cancel.aborted) return undefined;
      const live = await this.#link.guard(liveWorkers(this.#link.client)).then((workers) => workers.size, () => 0);
      if (live > 0 || Date.now() >= deadline) return live;
      await new Promise((resolve) => setTimeout(resolve, WORKER_LOOK_MS));
    }
  }

  /** Why the batch could not go on, once it could not. */
  get failure(): LllmError | undefined {
    return this.#failure;
  }

  run(item: BatchItem): Promise<BatchResult> {
    if (this.#failure) return Promise.reject(new InterruptedError("interrupted", this.#failure.message));
    const data: QueueItem = { id: item.id, index: item.index, input: item.input, vars: item.vars };
    return new Promise<BatchResult>((resolve, reject) => {
      this.#pending.set(jobIdOf(item.id), { item: data, resolve, reject });
      this.#add(data).catch(() => undefined); // Redis away: the link fails the batch in time, or the check adds it again
    });
  }

  /** The items handed to the queue that no worker has taken yet (as of the last heartbeat): not running. */
  get waiting(): number {
    return this.#waiting;
  }

  /**
   * Take back the items no worker has taken yet (a first Ctrl-C: only the running ones are waited for). They end
   * cancelled, so they are not written and a rerun runs them. Returns how many were taken back.
   */
  async withdrawWaiting(): Promise<number> {
    // The batch's own queue paused first: no worker takes a job meanwhile, so none of those read below runs (or ends,
    // its result then dropped with it) while it is taken back. The running ones go on.
    await this.#link.guard(this.#queue.pause());
    const jobs = await this.#link.guard(this.#queue.getJobs(["waiting", "prioritized", "delayed"], 0, -1));
    let withdrawn = 0;
    for (const job of jobs) {
      const pending = job?.id === undefined ? undefined : this.#pending.get(job.id);
      if (!job?.id || !pending) continue;
      // Out of the pending ones first: the check that queues lost jobs again must not find it missing and add it.
      this.#pending.delete(job.id);
      if (!(await job.remove().then(() => true, () => false))) {
        this.#pending.set(job.id, pending);
        continue;
      }
      pending.reject(new InterruptedError("interrupted", "taken back from the queue before a worker started it"));
      withdrawn += 1;
    }
    return withdrawn;
  }

  async #add(item: QueueItem): Promise<void> {
    await this.#queue.add("item", item, { jobId: jobIdOf(item.id), attempts: JOB_ATTEMPTS, removeOnComplete: false, removeOnFail: false });
  }

  /**
   * Poll again soon after a poll that found finished jobs (more are likely finishing: a result collected late keeps
   * its slot busy and the workers waiting for the next item), and every `pollMs` while nothing finishes.
   */
  #schedule(delayMs = this.#options.pollMs ?? 100): void {
    if (this.#closed || this.#failure) return;
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
    const queue = this.#queue;
    const collected: Array<Promise<unknown>> = [];
    const jobs = await this.#link.guard(queue.getJobs(["completed", "failed"], 0, 499, true));
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
    await this.#link.guard(Promise.all(collected));
    if (Date.now() - this.#lastCheck >= this.#timings.heartbeatMs) {
      this.#lastCheck = Date.now();
      await this.#link.guard(this.#check());
    }
    return jobs.length;
  }

  /** Every heartbeat: say the batch is alive, look at the workers, and enqueue again what a Redis restart lost. */
  async #check(): Promise<void> {
    await this.#announce();
    const refusal = await this.#watch.check();
    if (refusal) return this.#fail(refusal);
    // A Redis restart without persistence loses every job: enqueue again what is still pending (all at once: one
    // round trip's wait, not one per item).
    const pending = [...this.#pending];
    const states = await Promise.all(pending.map(([jobId]) => this.#queue.getJobState(jobId)));
    this.#waiting = states.filter((state) => state === "waiting" || state === "prioritized" || state === "delayed").length;
    await Promise.all(pending.filter(([jobId], index) => states[index] === "unknown" && this.#pending.has(jobId)).map(([, item]) => this.#add(item.item)));
  }

  /** Tell the workers about the batch, and that its producer lives (again after a Redis restart: idempotent writes). */
  async #announce(): Promise<void> {
    const client = this.#link.client;
    const { announcement } = this.#options;
    // The heartbeat first: a worker that sees the batch listed without it removes the batch.
    await client.set(aliveKey(announcement.batchId), String(Date.now()), "PX", this.#timings.aliveMs);
    await client.hset(batchKey(announcement.batchId), "announcement", JSON.stringify(announcement));
    await client.sadd(BATCHES_KEY, announcement.batchId);
  }

  #fail(error: LllmError): void {
    if (this.#failure || this.#closed) return;
    this.#failure = error;
    clearTimeout(this.#timer);
    clearInterval(this.#heartbeat);
    // Not written as failed: these items never ran, and a rerun with the same --out runs them.
    this.#cancelAll(new InterruptedError("interrupted", error.message));
    this.#options.onFailure(error);
  }

  #cancelAll(reason: InterruptedError): void {
    for (const pending of this.#pending.values()) pending.reject(reason);
    this.#pending.clear();
  }

  /**
   * Stop polling and remove the batch from Redis (its queue, jobs, announcement and heartbeat). With Redis away, the
   * keys stay (a restarted Redis without persistence has none; otherwise the workers remove a batch whose producer
   * is gone, and so does `lllm batch --queue URL --purge`): nothing waits for a Redis that may never come back.
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearInterval(this.#heartbeat);
    const link = this.#link;
    try {
      const down = link.whenDown();
      if (link.isUp) await Promise.race([this.#polling, down]);
      if (link.isUp) await Promise.race([link.guard(removeBatch(link.client, this.#options.announcement.batchId)).catch(() => undefined), down]);
    } finally {
      void this.#queue.disconnect().catch(() => undefined);
      link.close();
    }
  }
}

function failedResult(item: QueueItem, reason: string | undefined): BatchResult {
  return failedBatchResult(item.id, { code: "worker_failed", message: `the workers could not run this item: ${reason ?? "unknown reason"}` });
}
