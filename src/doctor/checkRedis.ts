import type { Redis } from "ioredis";
import { queueConnection, redactQueueUrl, WORKER_KEY_PREFIX } from "../batch/queue/queueConnection.js";
import { scanKeys, servedJobCounts } from "../serve/queue/serveQueueWire.js";
import { liveWorkerMarks, refusedByAll } from "../serve/queue/servedRefusals.js";
import type { DoctorCheck } from "./DoctorCheck.js";

/**
 * `--queue URL`: connect to Redis once and PING it, as `lllm batch --queue`, `lllm serve --queue` and `lllm worker`
 * will; then look at the pool: its live workers (none is a failure: nothing would run), and the tactics servers
 * announce, with the requests waiting for a worker and running (one every live worker refuses is a failure: its
 * requests fail).
 */
export async function checkRedis(url: string): Promise<DoctorCheck[]> {
  const name = `redis ${redactQueueUrl(url)}`;
  try {
    queueConnection(url, "--queue");
  } catch (error) {
    return [{ name, status: "fail", detail: (error as Error).message, fix: (error as { hint?: string }).hint ?? "e.g. --queue redis://127.0.0.1:6379" }];
  }
  const { Redis } = await import("ioredis");
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  // ioredis reports why a connection failed (a refused port, a wrong password) as an event, then rejects with
  // "Connection is closed.": the event's message is the one worth printing.
  let lastError: string | undefined;
  client.on("error", (error: Error) => (lastError = error.message));
  try {
    await client.connect();
    const pong = await client.ping();
    const info = await client.info("server").catch(() => "");
    const version = /redis_version:(\S+)/.exec(info)?.[1];
    return [{ name, status: "ok", detail: `answers ${pong}${version ? ` (Redis ${version})` : ""}` }, await workersCheck(client, url), await servedCheck(client, url)];
  } catch (error) {
    const message = lastError ?? (error as Error).message;
    const auth = /NOAUTH|WRONGPASS|invalid password/i.test(message);
    return [{ name, status: "fail", detail: `cannot use it: ${message}`, fix: auth ? "give the password in the URL: redis://:PASSWORD@host:port" : "start Redis there (redis-server), or check the host and port" }];
  } finally {
    client.disconnect();
  }
}

/** The workers whose heartbeat is live, with how long ago each beat. */
async function workersCheck(client: Redis, url: string): Promise<DoctorCheck> {
  const keys = await scanKeys(client, `${WORKER_KEY_PREFIX}*`);
  const workers = keys.map((key) => key.slice(WORKER_KEY_PREFIX.length)).sort();
  if (workers.length === 0) return { name: "queue workers", status: "fail", detail: "no live worker: batches and served requests wait in the queue", fix: `start one (here or on another machine): lllm worker --queue ${redactQueueUrl(url)} -p DIR` };
  return { name: "queue workers", status: "ok", detail: `${workers.length} live worker${workers.length === 1 ? "" : "s"}: ${workers.join(", ")}` };
}

/**
 * The tactics `lllm serve --queue` servers announce, each with its requests waiting and running; one that every live
 * worker refuses (as its servers judge it: `refusedByAll`) fails, with each worker's reason.
 */
async function servedCheck(client: Redis, url: string): Promise<DoctorCheck> {
  const lines: string[] = [];
  let refused = false;
  const live = await liveWorkerMarks(client);
  for (const digest of (await client.smembers("lllm:serve:tactics")).sort()) {
    const text = await client.get(`lllm:serve:tactic:${digest}`);
    if (text === null) continue; // its servers are gone
    const name = (JSON.parse(text) as { tactic?: string }).tactic ?? digest;
    const { waiting, running } = await servedJobCounts(client, digest);
    const reasons = await refusedByAll(client, digest, live);
    refused ||= reasons !== undefined;
    // Each worker's reason, not its advice on how to start a worker: the fix below says it once.
    const why = reasons ? `: every live worker refuses it, its requests fail (${[...reasons].map(([worker, message]) => `worker ${worker}: ${message.split("\n")[0]}`).join("; ")})` : "";
    lines.push(`${name} (${waiting} waiting, ${running} running)${why}`);
  }
  if (refused) return { name: "served tactics", status: "fail", detail: lines.join("; "), fix: `do what the workers ask: usually, give them the packages of the served tactics (lllm worker --queue ${redactQueueUrl(url)} -p DIR)` };
  return { name: "served tactics", status: "ok", detail: lines.length > 0 ? lines.join(", ") : "none: no lllm serve --queue announces tactics here" };
}
