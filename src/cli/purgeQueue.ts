import path from "node:path";
import { batchesOnRedis, removeBatch } from "../batch/queue/batchesOnRedis.js";
import { queueTimings } from "../batch/queue/queueConnection.js";
import { RedisLink } from "../batch/queue/RedisLink.js";
import { stopSignal } from "./handleSignals.js";
import { paint, warn, writeErr } from "./output.js";

/**
 * `lllm batch --queue URL --purge [--out FILE]`: remove from Redis every key of the batches whose `lllm batch` is
 * gone (killed, or its machine lost), or only of the one that wrote FILE. A batch whose producer still runs is
 * kept: it removes its keys itself when it ends. Workers remove gone producers' batches too; this is for a Redis
 * no worker watches.
 */
export async function purgeQueue(url: string, options: { out?: string }): Promise<void> {
  const link = await RedisLink.open({ url, reconnectMs: queueTimings().reconnectMs, warn, say: (message) => writeErr(paint("dim", `lllm batch: ${message}`)) });
  try {
    await link.ready(stopSignal());
    const out = options.out !== undefined ? path.resolve(options.out) : undefined;
    const batches = (await link.guard(batchesOnRedis(link.client, { orphans: true }))).filter((batch) => out === undefined || batch.announcement?.out === out);
    if (out !== undefined && batches.length === 0) {
      writeErr(`lllm batch: no batch on ${link.shownUrl} writes ${options.out}: nothing to remove`);
      return;
    }
    let removed = 0;
    for (const batch of batches) {
      const { announcement } = batch;
      const what = `batch ${batch.batchId}${announcement?.tactic ? ` (${announcement.tactic}${announcement.out ? `, writing ${announcement.out}` : ""})` : ""}`;
      if (batch.alive) {
        if (out !== undefined) {
          writeErr(`lllm batch: ${what} is still running${announcement?.producer ? ` (process ${announcement.producer.pid} on ${announcement.producer.host})` : ""}: kept; stop it (Ctrl-C) and it removes its keys itself`);
          process.exitCode = 1;
        }
        continue;
      }
      await link.guard(removeBatch(link.client, batch.batchId));
      removed += 1;
      writeErr(`lllm batch: removed ${what}`);
    }
    const kept = batches.filter((batch) => batch.alive).length;
    writeErr(`lllm batch: removed ${removed} batch${removed === 1 ? "" : "es"} from ${link.shownUrl}${kept > 0 && out === undefined ? `; ${kept} still running, kept` : ""}`);
  } finally {
    link.close();
  }
}
