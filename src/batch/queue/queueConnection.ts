import { hostname } from "node:os";
import type { Redis } from "ioredis";
import { ConfigError } from "../../errors.js";
import { registerSecret } from "../../util/redact.js";

/**
 * Redis keys shared by producers and workers (BullMQ's own keys live under `bull:`). A batch is alive while its
 * producer renews `aliveKey` (a key with a time to live); a worker is live while it renews `workerKey`.
 */
export const BATCHES_KEY = "lllm:batches";
export const batchKey = (batchId: string): string => `lllm:batch:${batchId}`;
export const aliveKey = (batchId: string): string => `lllm:batch:${batchId}:alive`;
export const WORKER_KEY_PREFIX = "lllm:worker:";
export const workerKey = (workerId: string): string => `${WORKER_KEY_PREFIX}${workerId}`;
export const queueName = (batchId: string): string => `lllm-batch-${batchId}`;

/**
 * How `lllm serve --queue` and its workers talk (serve/queue/serveQueueWire.ts), numbered so that the processes of one
 * queue tell another lllm version instead of waiting for each other: 2, a list per served tactic (1: BullMQ jobs).
 * A server announces it with its tactics and a worker with its heartbeat (`markWorkerAlive`).
 */
export const SERVING_PROTOCOL = 2;

/** What a worker's key holds (`markWorkerAlive`): `serving` is absent from an lllm older than serving protocol 2. */
export interface WorkerMark {
  host: string;
  pid: number;
  at: number;
  serving?: number;
}

/** Say this worker (`host:pid`) is live for `aliveMs` more: its heartbeat, and its mark before it takes any work. */
export function markWorkerAlive(redis: Redis, workerId: string, aliveMs: number): Promise<unknown> {
  const mark: WorkerMark = { host: hostname(), pid: process.pid, at: Date.now(), serving: SERVING_PROTOCOL };
  return redis.set(workerKey(workerId), JSON.stringify(mark), "PX", aliveMs);
}

/**
 * How the batch names its tactic, so that a worker finds the same one among its own packages (a worker never loads
 * a folder named in Redis): by package ref, with the digest of the file's content, or, for a tactic file outside
 * any package, as data (its resolved configuration) naming the packages it needs by name.
 */
export type QueuedTactic = { kind: "ref"; ref: string; contentDigest: string } | { kind: "data"; file: string; data: Record<string, unknown>; packageNames: string[] };

/** What a producer tells workers about its batch (a field of a Redis hash). */
export interface BatchAnnouncement {
  batchId: string;
  /** The tactic as the user named it (for messages only). */
  tactic: string;
  queued: QueuedTactic;
  /**
   * The packages of the producer's run, by name and version: for the message of a worker that lacks one (`lllm
   * worker -p DIR`). No folder: a worker never loads one named in Redis, and the producer's are not the worker's.
   */
  packages: Array<{ name: string; version: string | null }>;
  model: string | null;
  /** The resolved configuration's digest (`queueDigest`): a worker runs items only when its own has the same. */
  digest: string;
  vars: Record<string, string>;
  maxSteps: number | null;
  timeout: number | null;
  approve: "all" | "none";
  /** Who runs the batch, and its `--out` (absolute), for `lllm batch --queue URL --purge [--out FILE]`. */
  producer: { host: string; pid: number };
  out: string | null;
  /**
   * The batch runs again (its --out was there): a worker resumes the items whose runs stopped mid-way in its run store
   * (`--rerun-unknown`: even past a call cut short by the stop).
   */
  rerun?: boolean;
  rerunUnknown?: boolean;
  /** A served tactic's (`lllm serve --queue`): the server's `SERVING_PROTOCOL`. */
  serving?: number;
}

/** One job: an item of the batch. */
export interface QueueItem {
  id: string;
  index: number;
  input: unknown;
  vars: Record<string, string>;
}

/** How often, and for how long, producers and workers do what they do on Redis; tests shorten them (README). */
export interface QueueTimings {
  /** How often producers and workers say they are alive (`LLLM_QUEUE_HEARTBEAT_MS`, default 1 s). */
  heartbeatMs: number;
  /**
   * One silent for this long is gone: 10 heartbeats, at least 5 s (a busy machine may miss a few). Test-facing:
   * `LLLM_QUEUE_ALIVE_MS` (at least 3 heartbeats) sets it, so that tests of a worker or server found gone, and of keys
   * that expire, need not wait out the 5 s floor; it is not for production, whose default is the rule above.
   */
  aliveMs: number;
  /** A batch that sees no live worker for this long warns (`LLLM_QUEUE_NO_WORKER_MS`, default 30 s). */
  noWorkerMs: number;
  /** How long Redis may stay unreachable before `batch` and `worker` give up, exit 1 (`LLLM_QUEUE_RECONNECT_MS`, default 60 s). */
  reconnectMs: number;
  /** A job's lock without renewal: a worker killed mid-item gives it back after this (`LLLM_QUEUE_LOCK_MS`, default 30 s). */
  lockMs: number;
}

export function queueTimings(env: NodeJS.ProcessEnv = process.env): QueueTimings {
  const heartbeatMs = milliseconds(env.LLLM_QUEUE_HEARTBEAT_MS, 1000, 10);
  return {
    heartbeatMs,
    aliveMs: milliseconds(env.LLLM_QUEUE_ALIVE_MS, Math.max(heartbeatMs * 10, 5000), heartbeatMs * 3),
    noWorkerMs: milliseconds(env.LLLM_QUEUE_NO_WORKER_MS, 30_000, 0),
    reconnectMs: milliseconds(env.LLLM_QUEUE_RECONNECT_MS, 60_000, 0),
    lockMs: milliseconds(env.LLLM_QUEUE_LOCK_MS, 30_000, 500),
  };
}

function milliseconds(text: string | undefined, fallback: number, minimum: number): number {
  const value = Number(text);
  return text !== undefined && text.trim() !== "" && Number.isFinite(value) && value >= minimum ? value : fallback;
}

/** The options BullMQ's clients are built from. */
export interface QueueConnectionOptions {
  url: string;
  maxRetriesPerRequest: null;
  retryStrategy: (attempt: number) => number;
}

/**
 * `--queue redis://[:password@]host:port[/db]`, checked before anything connects. The password (if any) is
 * registered as a secret, so that no message lllm prints can carry it.
 */
export function queueConnection(url: string, flag = "--queue"): QueueConnectionOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError("usage_queue", `${flag} \`${redactQueueUrl(url)}\` is not a URL`, { location: { file: flag }, hint: "e.g. --queue redis://127.0.0.1:6379" });
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") throw new ConfigError("usage_queue", `${flag} must be a redis:// or rediss:// URL (got \`${parsed.protocol}\`)`, { location: { file: flag }, hint: "e.g. --queue redis://127.0.0.1:6379" });
  if (parsed.password !== "") {
    registerSecret(parsed.password);
    registerSecret(decodeURIComponent(parsed.password));
  }
  // maxRetriesPerRequest null: BullMQ's blocking commands wait across a Redis restart instead of failing (the
  // RedisLink bounds how long). Reconnect with backoff: quickly at first, then every 2 s.
  return { url, maxRetriesPerRequest: null, retryStrategy: reconnectDelay };
}

/** Milliseconds before the next attempt to reach Redis: 100, 200, 400… up to 2 s. */
export function reconnectDelay(attempt: number): number {
  return Math.min(100 * 2 ** Math.max(0, attempt - 1), 2000);
}

/**
 * The URL as lllm prints it: its userinfo (a password, and the user name with it) masked, `redis://[redacted]@host:6379` (the same mask as every URL lllm prints).
 * Whatever the shape of the text, nothing between `//` and the last `@` before the path survives.
 */
export function redactQueueUrl(url: string): string {
  const masked = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, "$1[redacted]@");
  // Not even URL-shaped (a typo in the scheme): mask everything up to the last `@` all the same.
  return masked !== url || !url.includes("@") ? masked : `[redacted]${url.slice(url.lastIndexOf("@"))}`;
}

/** A BullMQ job id for an item id: any text, but BullMQ refuses `:` and integers. */
export function jobIdOf(itemId: string): string {
  return `i-${Buffer.from(itemId, "utf8").toString("base64url")}`;
}

export async function loadBullmq(): Promise<typeof import("bullmq")> {
  try {
    return await import("bullmq");
  } catch (error) {
    throw new ConfigError("queue_unavailable", `--queue needs the bullmq package, which cannot be loaded: ${(error as Error).message}`, { hint: "Reinstall lllm (npm install) so that its dependencies are complete." });
  }
}
