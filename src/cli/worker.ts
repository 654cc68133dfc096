import { hostname } from "node:os";
import { ConfigError } from "../errors.js";
import { queueConnection, redactQueueUrl } from "../batch/queue/queueConnection.js";
import { runWorker, type RunWorkerOptions } from "../batch/queue/runWorker.js";
import { holdFirstSignal, stopAfterHold, stopSignal } from "./handleSignals.js";
import { loadRegistry } from "./loadRegistry.js";
import { secondsFlag } from "./numberFlag.js";
import { timerDelay } from "../util/timerDelay.js";
import { paint, warn, writeErr } from "./output.js";
import { steadyHeap } from "../util/steadyHeap.js";

export interface WorkerCommandOptions {
  queue?: string;
  concurrency?: string;
  package?: string[];
  log?: boolean;
  drainTimeout?: string;
}

/**
 * How long a stopping worker lets its running items finish by default (`--drain-timeout`): under Kubernetes' stop
 * grace of 30 s, with time left to give the rest back before its SIGKILL (Sidekiq's default, for the same reason).
 */
const DRAIN_TIMEOUT_S = 25;

/** `lllm worker --queue URL`: run the items of the batches queued on Redis, until Ctrl-C or SIGTERM. */
export async function workerCommand(options: WorkerCommandOptions): Promise<void> {
  if (options.queue === undefined) throw new ConfigError("usage_queue", "missing --queue: the Redis the batches are queued on", { location: { file: "--queue" }, hint: "lllm worker --queue redis://127.0.0.1:6379" });
  queueConnection(options.queue);
  const concurrency = Number(options.concurrency ?? "4");
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new ConfigError("usage_number", `--concurrency must be a whole number >= 1 (got \`${options.concurrency}\`)`, { location: { file: "--concurrency" } });
  const drainSeconds = options.drainTimeout === undefined ? DRAIN_TIMEOUT_S : secondsFlag(options.drainTimeout, "--drain-timeout", "30", { zero: true });
  // The worker's own packages, loaded once: the only place a batch's tactic is looked for (never a folder named in Redis).
  const packages = options.package ?? [];
  const registry = await loadRegistry(packages);
  steadyHeap();
  const stop = new AbortController();
  const cancel = stopSignal();
  // The first Ctrl-C or SIGTERM (a supervisor's stop: a rolling deploy, a scale-down) stops taking items and served
  // requests and lets the running ones finish, for --drain-timeout; then, or at a second signal, they are cancelled:
  // the items go back to the queue, and requests that sent their client nothing yet to other workers. Within a
  // supervisor's stop grace, that is sooner than a dead worker's (its locks and heartbeat expire).
  cancel.addEventListener("abort", () => stop.abort(), { once: true });
  let drainEnd: NodeJS.Timeout | undefined;
  holdFirstSignal((signal) => {
    stop.abort();
    writeErr(`lllm worker: ${signal === "SIGINT" ? "interrupted" : `received ${signal}`}: taking no new items; finishing the running ones for up to ${drainSeconds} s (${signal === "SIGINT" ? "Ctrl-C again" : "a second signal"} cancels them: they go back to the queue)`);
    drainEnd = setTimeout(() => stopAfterHold(signal, `lllm worker: the running items did not finish within --drain-timeout (${drainSeconds} s): cancelling them (they go back to the queue)`), timerDelay(drainSeconds * 1000));
    drainEnd.unref();
  }, ["SIGINT", "SIGTERM"]);
  const names = registry.list().map((pkg) => pkg.name);
  writeErr(paint("dim", `lllm worker: waiting for batches and served requests on ${redactQueueUrl(options.queue)} (${concurrency} at once; packages: ${names.length > 0 ? names.join(", ") : "none"})`));
  // The same worker runs the requests of `lllm serve --queue`, beside the batches (both stop on the same signals).
  const { serveOnWorker } = await import("../serve/queue/serveOnWorker.js");
  // The same options for both sides: one worker, one concurrency, one pair of signals. Each side holds a link to
  // the same Redis, and each tells of its loss and return: the worker says each such line once.
  const once = sayOnce();
  const sides: RunWorkerOptions = {
    url: options.queue,
    concurrency,
    registry,
    packages,
    stop: stop.signal,
    cancel,
    ...(options.log !== undefined ? { log: options.log } : {}),
    say: once((message: string) => writeErr(paint("dim", message.startsWith("lllm") ? message : `lllm worker: ${message}`))),
    warn: once(warn),
  };
  const serving = serveOnWorker({ ...sides, me: `${hostname()}:${process.pid}` });
  // One failure (Redis lost for good, a password refused) ends both, and is the worker's: it exits on it.
  let servingFailed: { error: unknown } | undefined;
  let served = 0;
  serving.then(
    (result) => (served = result.served),
    (error: unknown) => {
      servingFailed ??= { error };
      stop.abort();
    },
  );
  let ran = 0;
  try {
    ({ ran } = await runWorker({ ...sides, alsoRunning: serving }));
  } finally {
    stop.abort();
    await serving.catch(() => undefined);
    clearTimeout(drainEnd);
  }
  if (servingFailed) throw servingFailed.error;
  writeErr(`lllm worker: stopped after ${ran} item${ran === 1 ? "" : "s"}${served > 0 ? ` and ${served} served request${served === 1 ? "" : "s"}` : ""}`);
}

/** How long a line a worker said is not said again (both links notice a loss within a heartbeat of each other). */
const SAME_LINE_MS = 10_000;

/**
 * A wrapper that lets a line about Redis (lost, back, unreachable) through unless it repeats the last such line of a
 * few seconds ago: two links telling of one Redis say it once, and a loss after a return is said again. Other lines
 * (a tactic served again, a batch joined) are each an event of their own.
 */
function sayOnce(): (print: (message: string) => void) => (message: string) => void {
  let last: { message: string; at: number } | undefined;
  return (print) => (message) => {
    if (!message.includes("Redis at ")) return print(message);
    const now = performance.now();
    if (last?.message === message && last.at > now - SAME_LINE_MS) return;
    last = { message, at: now };
    print(message);
  };
}
