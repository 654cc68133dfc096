import { setMaxListeners } from "node:events";
import { rmSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import type { Worker } from "bullmq";
import { approveAll, approveNone, noticeFirstRefusal } from "../../approval/index.js";
import { replySizeBytes } from "../../config/index.js";
import type { Registry } from "../../registry/index.js";
import type { PreparedTactic } from "../../tactics/prepareTactic.js";
import { AdaptiveConcurrency } from "../AdaptiveConcurrency.js";
import { batchModelFactory } from "../batchModelFactory.js";
import { ProviderGate } from "../ProviderGate.js";
import { runBatchItem } from "../runBatchItem.js";
import { producerAlive, removeBatch } from "./batchesOnRedis.js";
import { prepareQueuedTactic, readAnnouncement, Refusal } from "./prepareQueuedTactic.js";
import { aliveKey, BATCHES_KEY, batchKey, loadBullmq, markWorkerAlive, queueConnection, queueName, queueTimings, workerKey, type QueueItem } from "./queueConnection.js";
import { RedisLink } from "./RedisLink.js";
import { processTempDir } from "../../util/processTempDir.js";
import { batchItemKey } from "../../store/journal/batchItemKey.js";
import { storeFile } from "../../store/startRunLog.js";
import type { ItemResumes } from "../ItemResumes.js";

export interface RunWorkerOptions {
  url: string;
  /** Items this worker runs at once (over all batches). */
  concurrency: number;
  /** The worker's own packages: the only place a batch's tactic is looked for (see `prepareQueuedTactic`). */
  registry: Registry;
  /** Its `-p` folders. */
  packages: string[];
  /** Aborted on the first Ctrl-C: take no more items, finish the running ones. */
  stop: AbortSignal;
  /** Aborted on the second: cancel the running ones (their jobs go back to the queue). */
  cancel: AbortSignal;
  log?: boolean;
  say: (message: string) => void;
  warn: (message: string) => void;
  /**
   * The rest of this worker's work (the served requests it finishes after a Ctrl-C): its heartbeat goes on until
   * that is over too, since servers take a worker whose heartbeat stopped for gone and its requests for lost.
   */
  alsoRunning?: Promise<unknown>;
}

/** A batch this worker takes items of. */
interface Joined {
  worker: Worker;
  /** Cancels the batch's running items (the batch is gone: no one will read their results). */
  abandon: AbortController;
  /** The batch runs again: its items whose runs stopped mid-way (closed when the worker leaves the batch). */
  resumes?: ItemResumes;
}

/** Writes a refusal only while the batch is announced: a refusal must not bring back the hash of a removed batch. */
const REFUSE_SCRIPT = "if redis.call('sismember', KEYS[1], ARGV[1]) == 1 then return redis.call('hset', KEYS[2], ARGV[2], ARGV[3]) end return 0";

/**
 * `lllm worker`: watch Redis for batches, join each one whose tactic this worker has among its own packages, with
 * the same digest (and refuse the others, saying why, to the producer too), and run their items. Says it is alive
 * (producers count live workers), and removes batches whose producer is gone. Returns when `stop` aborts, after the
 * running items finished (at once when Redis is away: their results could not be written); throws an `LllmError`
 * when Redis stays unreachable (`LLLM_QUEUE_RECONNECT_MS`) or refuses the password.
 */
export async function runWorker(options: RunWorkerOptions): Promise<{ ran: number }> {
  const timings = queueTimings();
  const connection = queueConnection(options.url);
  const link = await RedisLink.open({ url: options.url, reconnectMs: timings.reconnectMs, warn: options.warn, say: options.say });
  // A lost Redis cancels the running items as a second Ctrl-C does: their results could not be written.
  const cancel = AbortSignal.any([options.cancel, link.failed]);
  // Each running item listens on the cancel signal and (its run log) on process exit: many at once is by design.
  setMaxListeners(options.concurrency * 4 + 20, cancel);
  process.setMaxListeners(process.getMaxListeners() + options.concurrency * 2);
  const redis = link.client;
  const joined = new Map<string, Joined>();
  const refused = new Set<string>();
  /** Batches this worker left because they were gone from Redis, and when. */
  const gone = new Map<string, number>();
  const gate = new ProviderGate();
  const concurrency = new AdaptiveConcurrency(options.concurrency);
  const me = `${hostname()}:${process.pid}`;
  let scratch: string | undefined;
  let ran = 0;
  let closed = false;
  let heartbeat: NodeJS.Timeout | undefined;

  const join = async (batchId: string): Promise<void> => {
    const text = await redis.hget(batchKey(batchId), "announcement");
    if (text === null) return;
    let prepared: PreparedTactic;
    let announcement;
    try {
      announcement = readAnnouncement(text);
      prepared = await prepareQueuedTactic(announcement, { registry: options.registry, packages: options.packages, scratch: () => (scratch ??= processTempDir("lllm-worker-")) });
    } catch (error) {
      return refuse(batchId, error instanceof Refusal ? error.message : `this worker could not prepare the tactic: ${(error as Error).message}`);
    }
    const { Worker, WaitingError } = await loadBullmq();
    const abandon = new AbortController();
    const itemSignal = AbortSignal.any([cancel, abandon.signal]);
    setMaxListeners(options.concurrency * 4 + 20, itemSignal);
    const maxReplyBytes = replySizeBytes(prepared.settings.reply_size);
    const createModel = batchModelFactory({ gate, concurrency, signal: itemSignal, ...(announcement.timeout !== null ? { modelTimeout: announcement.timeout } : {}), ...(maxReplyBytes !== undefined ? { maxReplyBytes } : {}) });
    const settings = announcement;
    // A worker asks nobody: the batch's --approve decides (default none), and the first refusal says so.
    const approve = settings.approve === "all" ? approveAll : noticeFirstRefusal(approveNone, (request) => options.warn(`batch ${batchId}: \`${request.tool}\` needs approval and was refused: workers ask nobody; start the batch with --approve all to run such tools`));
    // An item's runs are keyed by its batch's --out (or the batch): a worker taking back an item of a worker that
    // died, or an item of the batch run again, resumes its stopped run when it is in this worker's run store.
    const scope = announcement.out ?? `batch ${batchId}`;
    const resumeOptions = { file: storeFile(process.env, prepared.settings.home), scope, prepared, rerunUnknown: announcement.rerunUnknown === true, warn: (message: string) => options.warn(`batch ${batchId}: ${message}`) };
    const recording = options.log !== false;
    const resumes = recording && announcement.rerun ? (await import("../ItemResumes.js")).ItemResumes.open(resumeOptions) : undefined;
    const worker = new Worker(
      queueName(batchId),
      async (job, token) => {
        const item = job.data as QueueItem;
        // Taken back after its worker died (BullMQ's stalled-job check): its run may have stopped mid-way.
        const takenBack = (job.attemptsStarted ?? 0) > 1 || (job.stalledCounter ?? 0) > 0;
        const resume = resumes?.of(item.id) ?? (recording && takenBack ? (await import("../ItemResumes.js")).ItemResumes.forItem(resumeOptions, item.id) : undefined);
        let result: Awaited<ReturnType<typeof runBatchItem>>;
        try {
          result = await runBatchItem(item, {
            prepared,
            batchId,
            createModel,
            vars: settings.vars,
            ...(settings.maxSteps !== null ? { maxSteps: settings.maxSteps } : {}),
            approve,
            signal: itemSignal,
            ...(options.log !== undefined ? { log: options.log } : {}),
            warn: options.warn,
            ...(recording ? { batchItem: batchItemKey(scope, item.id) } : {}),
            ...(resume ? { resume } : {}),
          });
        } catch (error) {
          // Cancelled by this worker's stop (its drain timeout, a second signal), not by Redis lost or the batch
          // gone: the job goes back to the head of the queue without counting as a failed attempt (three stops in
          // a rolling deploy would otherwise fail the item for good), and the next worker resumes its run.
          if (options.cancel.aborted && !link.failed.aborted && !abandon.signal.aborted && token !== undefined) {
            const movedBack = await job.moveToWait(token).then(() => true, () => false);
            if (movedBack) throw new WaitingError("the worker stopped: the item goes back to the queue");
          }
          throw error;
        }
        ran += 1;
        return result;
      },
      { connection, concurrency: options.concurrency, lockDuration: timings.lockMs, stalledInterval: Math.max(250, Math.floor(timings.lockMs / 2)), maxStalledCount: 5 },
    );
    worker.on("error", () => undefined); // connection errors during a Redis restart: BullMQ reconnects
    joined.set(batchId, { worker, abandon, ...(resumes ? { resumes } : {}) });
    options.say(`lllm worker: joined batch ${batchId} (${announcement.queued.kind === "ref" ? announcement.queued.ref : announcement.tactic})`);
  };

  /** Who announced a batch (for the process check of a producer on this machine). */
  const producerOf = async (batchId: string): Promise<{ host?: unknown; pid?: unknown } | undefined> => {
    try {
      const text = await redis.hget(batchKey(batchId), "announcement");
      return text === null ? undefined : ((JSON.parse(text) as { producer?: { host?: unknown; pid?: unknown } }).producer ?? undefined);
    } catch {
      return undefined;
    }
  };

  const refuse = async (batchId: string, message: string): Promise<void> => {
    refused.add(batchId);
    options.warn(`batch ${batchId} refused: ${message}`);
    await redis.eval(REFUSE_SCRIPT, 2, BATCHES_KEY, batchKey(batchId), batchId, `refused:${me}`, message);
  };

  /** The heartbeat, on a timer of its own: a round busy preparing a tactic must not make this worker look gone. */
  const beat = (): void => {
    if (link.isUp) void markWorkerAlive(redis, me, timings.aliveMs).catch(() => undefined);
  };

  const round = async (): Promise<void> => {
    const batches = new Set(await redis.smembers(BATCHES_KEY));
    for (const batchId of batches) {
      // A batch whose producer is gone (killed, or its machine lost) is removed, by whichever worker sees it first.
      if ((await redis.exists(aliveKey(batchId))) === 0 && !producerAlive(false, await producerOf(batchId))) {
        await leave(batchId, "its `lllm batch` is gone");
        if ((await redis.set(`${batchKey(batchId)}:removing`, me, "PX", timings.aliveMs, "NX")) === "OK") {
          await removeBatch(redis, batchId);
          await redis.del(`${batchKey(batchId)}:removing`);
          options.say(`lllm worker: removed batch ${batchId} from Redis: its \`lllm batch\` is gone`);
        }
        continue;
      }
      if (!joined.has(batchId) && !refused.has(batchId)) await join(batchId);
    }
    for (const batchId of refused) if (!batches.has(batchId)) refused.delete(batchId);
    // A batch gone from Redis is over (or Redis restarted empty: its producer announces it again, and enqueues
    // again the jobs Redis lost; this worker joins it again then).
    for (const batchId of [...joined.keys()]) {
      if (batches.has(batchId)) continue;
      await leave(batchId);
      gone.set(batchId, Date.now());
    }
    // What this worker's BullMQ worker wrote since the producer removed the batch (its stalled-job check writes the
    // queue's meta hash) is removed once the batch has stayed gone a while (a restarted Redis gets it back sooner).
    for (const [batchId, since] of gone) {
      if (batches.has(batchId)) gone.delete(batchId);
      else if (Date.now() - since > timings.aliveMs) {
        gone.delete(batchId);
        await removeLeftovers(batchId);
      }
    }
  };

  /** Remove what is left of a batch that is over: not announced, and no producer heartbeat. */
  const removeLeftovers = async (batchId: string): Promise<void> => {
    if ((await redis.sismember(BATCHES_KEY, batchId)) === 0 && (await redis.exists(aliveKey(batchId))) === 0) await removeBatch(redis, batchId);
  };

  /**
   * Stop taking items of a batch that is gone: its producer ended (its jobs are removed with it), was killed, or
   * Redis restarted empty. Its running items are cancelled: no one would read their results.
   */
  const leave = async (batchId: string, why?: string): Promise<void> => {
    const entry = joined.get(batchId);
    if (!entry) return;
    joined.delete(batchId);
    entry.abandon.abort();
    await entry.worker.close(true);
    entry.resumes?.close();
    if (scratch) rmSync(path.join(scratch, `${batchId}.json`), { force: true });
    options.say(`lllm worker: left batch ${batchId}${why ? `: ${why}` : ""}`);
  };

  try {
    try {
      await link.ready(options.stop);
    } catch (error) {
      if (options.stop.aborted && !link.failed.aborted) return { ran };
      throw error;
    }
    beat();
    heartbeat = setInterval(beat, timings.heartbeatMs);
    let lastProblem = "";
    let current: Promise<void> = Promise.resolve();
    while (!options.stop.aborted && !link.failed.aborted) {
      try {
        current = round();
        await link.guard(current, options.stop);
      } catch (error) {
        // Redis away (restarting): the link says so and gives up in time; a Ctrl-C ends the loop. Anything else is
        // told (once), not swallowed: the next round tries again.
        const problem = (error as Error)?.message ?? String(error);
        if (link.isUp && !options.stop.aborted && problem !== lastProblem) options.warn(`lllm worker: ${problem} (trying again)`);
        lastProblem = problem;
      }
      await pause(timings.heartbeatMs, [options.stop, link.failed]);
    }
    if (link.failed.aborted) throw link.failed.reason;
    // A round cut short by Ctrl-C may still be joining a batch: let it, so that what it joins is closed below.
    await Promise.race([current.catch(() => undefined), link.whenDown()]);
    // Finish the running items (the drain timeout or a second Ctrl-C cancels them: their jobs go back to the queue),
    // unless Redis is away: their results could not be written, and Ctrl-C must end the worker all the same.
    const closing = Promise.allSettled([...joined.values()].map((entry) => entry.worker.close())).then(() => "closed" as const);
    if ((await Promise.race([closing, link.whenDown().then(() => "down" as const)])) === "closed") {
      closed = true;
      await Promise.race([options.alsoRunning?.catch(() => undefined), link.whenDown()]);
      clearInterval(heartbeat); // before the heartbeat key is removed, so that no late beat brings it back
      const over = async (): Promise<void> => {
        for (const batchId of new Set([...joined.keys(), ...gone.keys()])) await removeLeftovers(batchId);
      };
      await link.guard(Promise.all([redis.del(workerKey(me)), over()])).catch(() => undefined);
    }
  } finally {
    clearInterval(heartbeat);
    // Redis away, or the link gave up: let go of BullMQ's connections at once (a close would wait for Redis).
    if (!closed) for (const entry of joined.values()) void entry.worker.disconnect().catch(() => undefined);
    link.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
  return { ran };
}

/** Wait `milliseconds`, or less when one of the signals aborts; leaves no listener behind either way. */
function pause(milliseconds: number, signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      for (const signal of signals) signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, milliseconds);
    for (const signal of signals) signal.addEventListener("abort", done, { once: true });
    if (signals.some((signal) => signal.aborted)) done();
  });
}
