import type { Redis } from "ioredis";
import { SERVING_PROTOCOL, WORKER_KEY_PREFIX, type WorkerMark } from "../../batch/queue/queueConnection.js";
import { LllmError } from "../../errors.js";
import { isPlainObject } from "../../util/isPlainObject.js";
import { refusalKey, scanKeys } from "./serveQueueWire.js";

/** The live workers (`host:pid`), with what each says of itself (undefined: not a mark this lllm reads). */
export async function liveWorkerMarks(client: Redis): Promise<Map<string, WorkerMark | undefined>> {
  const keys = await scanKeys(client, `${WORKER_KEY_PREFIX}*`);
  const marks = keys.length === 0 ? [] : await client.mget(keys);
  // A key that expired between the two calls is a worker gone, not one of another version.
  return new Map(keys.flatMap((key, index) => (marks[index] == null ? [] : [[key.slice(WORKER_KEY_PREFIX.length), readMark(marks[index]!)] as const])));
}

/**
 * When every live worker refuses a served tactic (`refusalKey`), why each one does, by worker: a worker of another
 * lllm version, which never takes the tactic either, with that reason. Undefined when a live worker may take it, when
 * none is live (requests wait for one), and when every live one runs another version only (nothing was refused: the
 * server warns about that case by itself). One read for all the workers.
 */
export async function refusedByAll(client: Redis, digest: string, live: ReadonlyMap<string, WorkerMark | undefined>): Promise<Map<string, string> | undefined> {
  const workers = [...live.keys()].sort();
  if (workers.length === 0) return undefined;
  const messages = await client.mget(workers.map((worker) => refusalKey(digest, worker)));
  const reasons = new Map<string, string>();
  let refusals = 0;
  workers.forEach((worker, index) => {
    const message = messages[index];
    const serving = live.get(worker)?.serving;
    if (message != null) {
      refusals++;
      reasons.set(worker, message);
    } else if (serving !== SERVING_PROTOCOL) {
      reasons.set(worker, `it runs another lllm version (serving protocol ${typeof serving === "number" ? serving : "1, from before protocol 2"}; this one's: ${SERVING_PROTOCOL}) and never takes these requests`);
    }
  });
  return refusals > 0 && reasons.size === workers.length ? reasons : undefined;
}

/** The error of a request for a served tactic every live worker refuses: each worker's reason, the tactic by name. */
export function servedRefusalError(shownUrl: string, tactic: string, reasons: ReadonlyMap<string, string>): LllmError {
  const lines = [...reasons].map(([worker, message]) => `  worker ${worker}: ${message.replace(/\n\s*/g, "\n    ")}`);
  return new LllmError("queue_refused", `every worker on ${shownUrl} refuses the served tactic \`${tactic}\`:\n${lines.join("\n")}`, {
    hint: "Do what the workers ask (usually: give them the tactic's packages and start them with `lllm worker --queue URL -p DIR`); requests are taken again as soon as a live worker takes the tactic.",
  });
}

/** A worker's refusal on one line (for a log line, a doctor's detail): its lines joined as sentences. */
export function oneLine(message: string): string {
  return message
    .split(/\n\s*/)
    .filter((line) => line !== "")
    .reduce((text, line) => (text === "" ? line : `${text}${/[.:;!?]$/.test(text) ? "" : "."} ${line}`), "");
}

function readMark(text: string): WorkerMark | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return isPlainObject(value) ? (value as unknown as WorkerMark) : undefined;
  } catch {
    return undefined;
  }
}
