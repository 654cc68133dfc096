import { existsSync } from "node:fs";
import { ConfigError } from "../errors.js";
import { runWorker } from "../batch/queue/runWorker.js";
import { holdFirstSignal, stopSignal } from "./handleSignals.js";
import { paint, warn, writeErr } from "./output.js";
import { resolveTacticTarget } from "./resolveTacticTarget.js";

export interface WorkerCommandOptions {
  queue?: string;
  concurrency?: string;
  package?: string[];
  log?: boolean;
}

/** `lllm worker --queue URL`: run the items of the batches queued on Redis, until Ctrl-C or SIGTERM. */
export async function workerCommand(options: WorkerCommandOptions): Promise<void> {
  if (options.queue === undefined) throw new ConfigError("usage_queue", "missing --queue: the Redis the batches are queued on", { location: { file: "--queue" }, hint: "lllm worker --queue redis://127.0.0.1:6379" });
  const concurrency = Number(options.concurrency ?? "4");
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new ConfigError("usage_number", `--concurrency must be a whole number >= 1 (got \`${options.concurrency}\`)`, { location: { file: "--concurrency" } });
  const stop = new AbortController();
  const cancel = stopSignal();
  // SIGTERM (a supervisor) stops as Ctrl-C does: no new items, the running ones finish within the grace.
  cancel.addEventListener("abort", () => stop.abort(), { once: true });
  holdFirstSignal(() => {
    stop.abort();
    writeErr("lllm worker: interrupted: taking no new items; finishing the running ones (Ctrl-C again to cancel them: they go back to the queue)");
  });
  writeErr(paint("dim", `lllm worker: waiting for batches on ${options.queue} (${concurrency} at once)`));
  const { ran } = await runWorker({
    url: options.queue,
    concurrency,
    stop: stop.signal,
    cancel,
    ...(options.log !== undefined ? { log: options.log } : {}),
    resolveTactic: async (announcement) => (existsSync(announcement.tacticFile) ? announcement.tacticFile : resolveTacticTarget(announcement.tactic, [...(options.package ?? []), ...announcement.packages.filter((dir) => existsSync(dir))])),
    say: (message) => writeErr(paint("dim", message)),
    warn,
  });
  writeErr(`lllm worker: stopped after ${ran} item${ran === 1 ? "" : "s"}`);
}
