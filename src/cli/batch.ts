import { setMaxListeners } from "node:events";
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { BudgetError, ConfigError } from "../errors.js";
import { approveAll, approveNone } from "../codeaction/approval.js";
import { prepareTactic } from "../tactics/prepareTactic.js";
import { newRunId } from "../util/newRunId.js";
import { formatCost } from "../store/RunTally.js";
import { AdaptiveConcurrency } from "../batch/AdaptiveConcurrency.js";
import { BatchOutput } from "../batch/BatchOutput.js";
import { BatchProgress } from "../batch/BatchProgress.js";
import { batchModelFactory } from "../batch/batchModelFactory.js";
import { countLines } from "../batch/countLines.js";
import { ProviderGate } from "../batch/ProviderGate.js";
import { readBatchItems, type DatasetFormat } from "../batch/readBatchItems.js";
import { runBatch, type BatchStats } from "../batch/runBatch.js";
import { runBatchItem } from "../batch/runBatchItem.js";
import { configDigest } from "../store/startRunLog.js";
import { replySizeBytes } from "../config/index.js";
import { QueueDispatcher } from "../batch/queue/QueueDispatcher.js";
import { loadBullmq, queueConnection, queueName } from "../batch/queue/queueConnection.js";
import { holdFirstSignal, stopSignal } from "./handleSignals.js";
import { warnBrokenFiles } from "./loadRegistry.js";
import { warnUnknownModels } from "./models.js";
import { paint, warn, writeErr } from "./output.js";
import { resolveTacticTarget } from "./resolveTacticTarget.js";
import { retryReporter } from "./retryReporter.js";
import { parseVars } from "./parseVars.js";
import { formatCount } from "../util/formatCount.js";

export interface BatchCommandOptions {
  inputs?: string;
  out?: string;
  concurrency?: string;
  ordered?: boolean;
  lines?: boolean;
  format?: DatasetFormat;
  var?: string[];
  model?: string;
  package?: string[];
  maxSteps?: string;
  timeout?: string;
  approve?: "all" | "none";
  log?: boolean;
  quiet?: boolean;
  retryFailed?: boolean;
  failFast?: boolean;
  rpm?: string;
  tpm?: string;
  maxCost?: string;
  maxTokens?: string;
  queue?: string;
  verbose?: boolean;
}

/** `lllm batch TACTIC --inputs FILE`: run one tactic over every item of a dataset, in one process. */
export async function batchCommand(tacticTarget: string, options: BatchCommandOptions): Promise<void> {
  const settings = batchSettings(options);
  if (options.queue !== undefined) queueConnection(options.queue); // a bad URL is a usage error before anything loads
  const file = await resolveTacticTarget(tacticTarget, options.package);
  // Loaded, validated and bound once for the whole batch.
  const prepared = await prepareTactic(file, { ...(options.model ? { model: options.model } : {}), ...(options.package ? { packages: options.package } : {}) });
  warnBrokenFiles(prepared.registry);
  warnUnknownModels(prepared.agents, prepared.settings.prices ?? {}, warn);

  const live = Boolean(process.stderr.isTTY);
  const progress = options.quiet ? undefined : new BatchProgress({ live, total: () => total });
  const say = (text: string): void => (progress ? progress.print(text) : writeErr(text));
  const gate = new ProviderGate({ ...(settings.rpm !== undefined ? { rpm: settings.rpm } : {}), ...(settings.tpm !== undefined ? { tpm: settings.tpm } : {}) });
  const concurrency = new AdaptiveConcurrency(settings.concurrency);
  const cancel = stopSignal();
  // Each running item listens on the cancel signal and (its run log) on process exit: many at once is by design.
  setMaxListeners(settings.concurrency * 4 + 20, cancel);
  process.setMaxListeners(process.getMaxListeners() + settings.concurrency * 2);
  const reporter = retryReporter(Boolean(options.verbose), say);
  const maxReplyBytes = replySizeBytes(prepared.settings.reply_size);
  const createModel = batchModelFactory({ gate, concurrency, signal: cancel, onRetry: reporter, ...(settings.timeout !== undefined ? { modelTimeout: settings.timeout } : {}), ...(maxReplyBytes !== undefined ? { maxReplyBytes } : {}) });
  // Every agent's model is built once before the first item: a missing key fails the batch now (exit 2), not
  // each item. With --queue the workers call the models, with their own keys.
  if (options.queue === undefined) for (const agent of prepared.agents) createModel(agent.config);

  const output = await BatchOutput.open({ ...(options.out !== undefined ? { file: options.out } : {}), ordered: Boolean(options.ordered), retryFailed: Boolean(options.retryFailed) });
  let total: number | undefined;
  if (settings.inputs !== "-") void countLines(settings.inputs).then((count) => (total = settings.format === "csv" ? Math.max(0, count - 1) : count)).catch(() => undefined);

  const batchId = newRunId();
  const queued = options.queue === undefined ? undefined : await startQueue({ url: options.queue, batchId, tacticTarget, tacticFile: file, prepared, options, settings, cancel, say });
  const stopStarting = new AbortController();
  let stats: BatchStats | undefined;
  holdFirstSignal(() => {
    stopStarting.abort();
    say(`lllm: interrupted: no new items; waiting for the ${stats?.inFlight ?? 0} running to finish (Ctrl-C again to cancel them)`);
  });
  try {
    stats = await runBatch({
      items: readBatchItems({ file: settings.inputs, format: settings.format }),
      output,
      concurrency,
      stopStarting: stopStarting.signal,
      ...(options.failFast ? { failFast: true } : {}),
      ...(settings.format === "lines" ? { uniqueIds: true } : {}),
      ...(settings.maxCost !== undefined ? { maxCost: settings.maxCost } : {}),
      ...(settings.maxTokens !== undefined ? { maxTokens: settings.maxTokens } : {}),
      warn: (message) => say(`${paint("yellow", "lllm: warning:")} ${message}`),
      onStart: (live) => {
        stats = live;
        progress?.update(live);
      },
      runItem: queued
        ? (item) => queued.run(item)
        : (item) =>
        runBatchItem(item, {
          prepared,
          batchId,
          createModel,
          vars: settings.vars,
          ...(settings.maxSteps !== undefined ? { maxSteps: settings.maxSteps } : {}),
          approve: options.approve === "all" ? approveAll : approveNone,
          signal: cancel,
          ...(options.log !== undefined ? { log: options.log } : {}),
          warn: (message) => say(`${paint("yellow", "lllm: warning:")} ${message}`),
        }),
    });
  } finally {
    progress?.stop();
    output.close();
    await queued?.close();
  }
  reportSummary(stats, { batchId, ...(options.out !== undefined ? { out: options.out } : {}), quiet: Boolean(options.quiet) });
  if (stats.stoppedBy === "budget") {
    throw new BudgetError("batch_budget", `the batch stopped starting items: ${settings.maxCost !== undefined && stats.cost >= settings.maxCost ? `--max-cost ${settings.maxCost} reached (${formatCost(stats.cost)})` : `--max-tokens ${settings.maxTokens} reached (${formatCount(stats.promptTokens + stats.completionTokens)} tokens)`}`, { hint: "Raise the limit and run the same command again: items already done are skipped." });
  }
  if (stats.stoppedBy === "interrupted") return; // the signal handler's exit code (130) stands
  if (stats.failed + stats.skippedFailed > 0) process.exitCode = 1;
}

/** --queue: announce the batch on Redis; items become jobs that `lllm worker`s run. */
async function startQueue(context: { url: string; batchId: string; tacticTarget: string; tacticFile: string; prepared: Awaited<ReturnType<typeof prepareTactic>>; options: BatchCommandOptions; settings: BatchSettings; cancel: AbortSignal; say: (text: string) => void }): Promise<QueueDispatcher> {
  const connection = queueConnection(context.url);
  const { Queue } = await loadBullmq();
  const { Redis } = await import("ioredis");
  const redis = new Redis(context.url, { maxRetriesPerRequest: null });
  redis.on("error", () => undefined); // reconnects by itself (a Redis restart); commands wait meanwhile
  const queue = new Queue(queueName(context.batchId), { connection });
  queue.on("error", () => undefined);
  const { options, settings } = context;
  const dispatcher = new QueueDispatcher({
    queue,
    redis,
    cancel: context.cancel,
    warn: (message) => context.say(`${paint("yellow", "lllm: warning:")} ${message}`),
    announcement: {
      batchId: context.batchId,
      tactic: context.tacticTarget,
      tacticFile: context.tacticFile,
      packages: (options.package ?? []).map((dir) => path.resolve(dir)),
      model: options.model ?? null,
      digest: configDigest(context.prepared),
      vars: settings.vars,
      maxSteps: settings.maxSteps ?? null,
      timeout: settings.timeout ?? null,
      approve: options.approve === "all" ? "all" : "none",
    },
    onClosed: () => redis.disconnect(),
  });
  await dispatcher.start();
  context.say(paint("dim", `lllm batch: batch ${context.batchId} is on ${context.url}; start \`lllm worker --queue ${context.url}\` to run its items`));
  return dispatcher;
}

function reportSummary(stats: BatchStats, context: { batchId: string; out?: string; quiet: boolean }): void {
  const seconds = ((Date.now() - stats.startedAt) / 1000).toFixed(1);
  const tokens = formatCount(stats.promptTokens + stats.completionTokens);
  const cost = stats.costUnknown > 0 && stats.cost === 0 ? "cost unknown" : `${formatCost(stats.cost)}${stats.costUnknown > 0 ? " (+ items of unknown cost)" : ""}`;
  const lines = [`lllm batch: ${stats.ok} ok, ${stats.failed} failed${stats.skipped > 0 ? `, ${stats.skipped} skipped (already in ${context.out ?? "the output"})` : ""}${stats.cancelled > 0 ? `, ${stats.cancelled} cancelled` : ""} in ${seconds} s; ${tokens} tokens, ${cost}; batch ${context.batchId}`];
  const failedTotal = stats.failed + stats.skippedFailed;
  if (failedTotal > 0) lines.push(`  ${failedTotal} item${failedTotal === 1 ? "" : "s"} failed: the lines with "status":"error" in ${context.out ?? "the output"} say why${context.out ? "; --retry-failed runs them again" : ""}`);
  if (stats.stoppedBy === "interrupted" || stats.stoppedBy === "fail_fast") lines.push(`  stopped before the end${stats.stoppedBy === "fail_fast" ? " (--fail-fast)" : ""}: ${context.out ? "run the same command again to go on" : "give --out FILE to be able to resume"}`);
  // The summary is the one line --quiet keeps only when something needs the user's attention.
  if (context.quiet && failedTotal === 0 && stats.stoppedBy === undefined) return;
  for (const line of lines) writeErr(line);
}

interface BatchSettings {
  inputs: string;
  format: DatasetFormat;
  concurrency: number;
  vars: Record<string, string>;
  maxSteps?: number;
  timeout?: number;
  rpm?: number;
  tpm?: number;
  maxCost?: number;
  maxTokens?: number;
}

/** Every flag checked before anything runs: a typo must not surface after an hour of paid calls. */
function batchSettings(options: BatchCommandOptions): BatchSettings {
  const inputs = options.inputs;
  if (inputs === undefined) throw new ConfigError("usage_inputs", "missing --inputs: the dataset to run the tactic over", { location: { file: "--inputs" }, hint: "lllm batch TACTIC --inputs items.jsonl --out results.jsonl (JSONL, CSV, or text lines with --lines; `-` for standard input)" });
  if (inputs !== "-") {
    if (!existsSync(inputs)) throw new ConfigError("usage_inputs", `the dataset \`${inputs}\` does not exist`, { location: { file: "--inputs" } });
    if (!statSync(inputs).isFile()) throw new ConfigError("usage_inputs", `the dataset \`${inputs}\` is a folder, not a file`, { location: { file: "--inputs" } });
  }
  if (options.lines && options.format !== undefined && options.format !== "lines") throw new ConfigError("usage_format", `--lines and --format ${options.format} disagree: give one`, { location: { file: "--lines" } });
  const format: DatasetFormat = options.lines ? "lines" : options.format ?? (path.extname(inputs).toLowerCase() === ".csv" ? "csv" : "jsonl");
  if (options.out !== undefined && path.resolve(options.out) === path.resolve(inputs)) throw new ConfigError("usage_out", "--out is the dataset itself: give another file", { location: { file: "--out" } });
  const settings: BatchSettings = { inputs, format, concurrency: positiveInteger(options.concurrency ?? (options.queue !== undefined ? "100" : "4"), "--concurrency", "e.g. --concurrency 16"), vars: parseVars(options.var ?? []) };
  if (options.maxSteps !== undefined) settings.maxSteps = positiveInteger(options.maxSteps, "--max-steps", "e.g. --max-steps 5", 0);
  if (options.timeout !== undefined) settings.timeout = positiveNumber(options.timeout, "--timeout", "seconds, e.g. --timeout 300");
  if (options.rpm !== undefined) settings.rpm = positiveInteger(options.rpm, "--rpm", "model requests per minute, e.g. --rpm 500");
  if (options.tpm !== undefined) settings.tpm = positiveInteger(options.tpm, "--tpm", "tokens per minute, e.g. --tpm 200000");
  if (options.maxCost !== undefined) settings.maxCost = positiveNumber(options.maxCost, "--max-cost", "US dollars, e.g. --max-cost 5");
  if (options.maxTokens !== undefined) settings.maxTokens = positiveInteger(options.maxTokens, "--max-tokens", "e.g. --max-tokens 1000000");
  return settings;
}

function positiveInteger(text: string, flag: string, hint: string, minimum = 1): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isInteger(value) || value < minimum) throw new ConfigError("usage_number", `${flag} must be a whole number >= ${minimum} (got \`${text}\`)`, { location: { file: flag }, hint });
  return value;
}

function positiveNumber(text: string, flag: string, hint: string): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || value <= 0) throw new ConfigError("usage_number", `${flag} must be a number above 0 (got \`${text}\`)`, { location: { file: flag }, hint });
  return value;
}

