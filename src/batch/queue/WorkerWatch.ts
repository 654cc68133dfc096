import type { Redis } from "ioredis";
import { LllmError } from "../../errors.js";
import { batchKey, WORKER_KEY_PREFIX } from "./queueConnection.js";

export interface WorkerWatchOptions {
  redis: Redis;
  batchId: string;
  /** The queue's URL as it may be printed (password masked). */
  shownUrl: string;
  /** Warn after this long without a live worker. */
  noWorkerMs: number;
  warn: (message: string) => void;
}

/**
 * What a producer knows of the workers: which are live (their heartbeat keys) and which refuse its batch (the
 * `refused:<worker>` fields of its announcement). A refusal is told once; a batch that every live worker refuses
 * fails (it would otherwise wait forever), and a batch with no live worker for `noWorkerMs` warns, once per spell.
 */
export class WorkerWatch {
  readonly #options: WorkerWatchOptions;
  readonly #told = new Set<string>();
  #lastSeen = Date.now();
  #warned = false;

  constructor(options: WorkerWatchOptions) {
    this.#options = options;
  }

  /** One look; returns the error to fail the batch with when every live worker refuses it. */
  async check(): Promise<LllmError | undefined> {
    const { redis, batchId, shownUrl } = this.#options;
    const live = await liveWorkers(redis);
    const refusals = new Map<string, string>();
    for (const [field, message] of Object.entries(await redis.hgetall(batchKey(batchId)))) {
      if (field.startsWith("refused:")) refusals.set(field.slice("refused:".length), message);
    }
    if (live.size === 0) {
      if (!this.#warned && Date.now() - this.#lastSeen >= this.#options.noWorkerMs) {
        this.#warned = true;
        const seconds = (Date.now() - this.#lastSeen) / 1000;
        this.#options.warn(`no \`lllm worker\` has been connected to ${shownUrl} for ${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s: the items wait in the queue; start one with \`lllm worker --queue ${shownUrl} -p DIR\` (DIR: the packages the tactic needs)`);
      }
      return undefined;
    }
    this.#lastSeen = Date.now();
    this.#warned = false;
    if ([...live].every((worker) => refusals.has(worker))) {
      const reasons = [...live].map((worker) => `  worker ${worker}: ${refusals.get(worker)!.replace(/\n\s*/g, "\n    ")}`);
      return new LllmError("queue_refused", `every worker on ${shownUrl} refuses this batch:\n${reasons.join("\n")}`, {
        hint: "Do what the workers ask (usually: give them the tactic's packages and start them with `lllm worker --queue URL -p DIR`), then run the same command again: items already done are skipped.",
      });
    }
    for (const [worker, message] of refusals) {
      if (this.#told.has(worker)) continue;
      this.#told.add(worker);
      this.#options.warn(`worker ${worker} refuses this batch: ${message}`);
    }
    return undefined;
  }
}

/** The ids of the workers whose heartbeat has not expired. */
export async function liveWorkers(redis: Redis): Promise<Set<string>> {
  const workers = new Set<string>();
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${WORKER_KEY_PREFIX}*`, "COUNT", 1000);
    cursor = next;
    for (const key of keys) workers.add(key.slice(WORKER_KEY_PREFIX.length));
  } while (cursor !== "0");
  return workers;
}
