import { hostname } from "node:os";
import type { Redis } from "ioredis";
import { aliveKey, BATCHES_KEY, batchKey, loadBullmq, queueName, type BatchAnnouncement } from "./queueConnection.js";

/** A batch found on Redis, and whether its producer is still there. */
export interface BatchOnRedis {
  batchId: string;
  /** Absent for a queue whose announcement is gone (left by an older lllm, or half removed). */
  announcement?: Partial<BatchAnnouncement>;
  /** Its producer renewed its heartbeat within the last 10 heartbeats, and (on this machine) its process lives. */
  alive: boolean;
}

/**
 * Every batch on this Redis: the announced ones and, with `orphans`, BullMQ queues of batches whose announcement is
 * gone (a scan of BullMQ's keys: for `--purge`, not for every round of a worker).
 */
export async function batchesOnRedis(redis: Redis, options: { orphans?: boolean } = {}): Promise<BatchOnRedis[]> {
  const ids = new Set(await redis.smembers(BATCHES_KEY));
  if (options.orphans) {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", "bull:lllm-batch-*", "COUNT", 1000);
      cursor = next;
      for (const key of keys) {
        const id = /^bull:lllm-batch-([^:]+):/.exec(key)?.[1];
        if (id) ids.add(id);
      }
    } while (cursor !== "0");
    cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", "lllm:batch:*", "COUNT", 1000);
      cursor = next;
      for (const key of keys) {
        const id = /^lllm:batch:([^:]+)/.exec(key)?.[1];
        if (id) ids.add(id);
      }
    } while (cursor !== "0");
  }
  const batches: BatchOnRedis[] = [];
  for (const batchId of ids) {
    const [text, alive] = await Promise.all([redis.hget(batchKey(batchId), "announcement"), redis.exists(aliveKey(batchId))]);
    let announcement: Partial<BatchAnnouncement> | undefined;
    try {
      announcement = text === null ? undefined : (JSON.parse(text) as Partial<BatchAnnouncement>);
    } catch {
      announcement = undefined;
    }
    batches.push({ batchId, ...(announcement ? { announcement } : {}), alive: producerAlive(alive === 1, announcement?.producer) });
  }
  return batches;
}

/**
 * Whether a batch's producer is there: on this machine, whether its process lives (known at once, and true
 * however late a busy machine renews the heartbeat); elsewhere, whether its heartbeat key is still there.
 */
export function producerAlive(heartbeat: boolean, producer: { host?: unknown; pid?: unknown } | undefined): boolean {
  if (!producer || producer.host !== hostname() || typeof producer.pid !== "number") return heartbeat;
  if (producer.pid === process.pid) return true;
  try {
    process.kill(producer.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * Remove every key of a batch: its announcement, its heartbeat, and its BullMQ queue with every job in it. Safe to
 * run twice, and from several workers at once.
 */
export async function removeBatch(redis: Redis, batchId: string): Promise<void> {
  await redis.srem(BATCHES_KEY, batchId);
  await redis.del(batchKey(batchId), aliveKey(batchId));
  const { Queue } = await loadBullmq();
  // The caller's client, shared: no new connection, and closing the queue leaves the client open.
  // skipMetasUpdate: a new Queue writes its meta hash once connected, which could land after the obliteration.
  const queue = new Queue(queueName(batchId), { connection: redis, skipMetasUpdate: true });
  queue.on("error", () => undefined);
  try {
    await queue.obliterate({ force: true });
  } finally {
    await queue.close();
  }
}
