import { queueConnection, redactQueueUrl } from "../batch/queue/queueConnection.js";
import type { DoctorCheck } from "./DoctorCheck.js";

/** `--queue URL`: connect to Redis once and PING it, as `lllm batch --queue` and `lllm worker` will. */
export async function checkRedis(url: string): Promise<DoctorCheck> {
  const name = `redis ${redactQueueUrl(url)}`;
  try {
    queueConnection(url, "--queue");
  } catch (error) {
    return { name, status: "fail", detail: (error as Error).message, fix: (error as { hint?: string }).hint ?? "e.g. --queue redis://127.0.0.1:6379" };
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
    return { name, status: "ok", detail: `answers ${pong}${version ? ` (Redis ${version})` : ""}` };
  } catch (error) {
    const message = lastError ?? (error as Error).message;
    const auth = /NOAUTH|WRONGPASS|invalid password/i.test(message);
    return { name, status: "fail", detail: `cannot use it: ${message}`, fix: auth ? "give the password in the URL: redis://:PASSWORD@host:port" : "start Redis there (redis-server), or check the host and port" };
  } finally {
    client.disconnect();
  }
}
