import { setMaxListeners } from "node:events";
import { existsSync, statSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { ConfigError, type LllmError } from "../errors.js";
import { approveAll, approveNone, noticeFirstRefusal } from "../approval/index.js";
import { prepareTactic } from "../tactics/prepareTactic.js";
import { chainMember, modelChain } from "../config/index.js";
import { newRunId } from "../util/newRunId.js";
import { AdaptiveConcurrency } from "../batch/AdaptiveConcurrency.js";
import { BatchOutput } from "../batch/BatchOutput.js";
import { BatchProgress } from "../batch/BatchProgress.js";
import { batchModelFactory } from "../batch/batchModelFactory.js";
import { countLines } from "../batch/countLines.js";
import { ProviderGate } from "../batch/ProviderGate.js";
import { DEFAULT_MAX_LINE_BYTES, MAX_LINE_BYTES, readBatchItems, type DatasetFormat } from "../batch/readBatchItems.js";
import { runBatch, type BatchStats } from "../batch/runBatch.js";
import { budgetError, duplicatesWarning, refuseUnpricedModels, reportSummary, unpricedError } from "./batchReport.js";
import { runBatchItem } from "../batch/runBatchItem.js";
import { replySizeBytes } from "../config/index.js";
import { QueueDispatcher } from "../batch/queue/QueueDispatcher.js";
import { queueConnection, redactQueueUrl, type QueuedTactic } from "../batch/queue/queueConnection.js";
import { queueDigest } from "../batch/queue/queueDigest.js";
import { queuedTactic } from "../batch/queue/queuedTactic.js";
import { purgeQueue } from "./purgeQueue.js";
import { holdFirstSignal, stopSignal } from "./handleSignals.js";
import { warnBrokenFiles } from "./loadRegistry.js";
import { warnUnknownModels } from "./models.js";
import { modelLocation } from "../tactics/modelLocation.js";
import { paint, warn, writeErr } from "./output.js";
import { resolveTacticTarget } from "./resolveTacticTarget.js";
import { retryReporter } from "./retryReporter.js";
import { parseVars, warnMisspeltVars } from "./parseVars.js";
import { positiveInteger } from "./positiveInteger.js";
import type { ProviderBatch } from "./providerBatch.js";
import type { ItemResume, ItemResumes } from "../batch/ItemResumes.js";
import { batchItemKey } from "../store/journal/batchItemKey.js";
import { storeFile } from "../store/startRunLog.js";

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
  maxLineSize?: string;
  queue?: string;
  purge?: boolean;
  verbose?: boolean;
  providerBatch?: boolean;
  /** `--rerun-unknown`: items resumed mid-way run again the calls their stop cut short, whatever their tools say. */
  rerunUnknown?: boolean;
  pollInterval?: string;
  status?: boolean;
  cancel?: boolean;
}

/** `lllm batch TACTIC --inputs FILE`: run one tactic over every item of a dataset, in one process. */
export async function batchCommand(tacticTarget: string | undefined, options: BatchCommandOptions): Promise<void> {
  if (options.purge) {
    if (options.queue === undefined) throw new ConfigError("usage_queue", "--purge needs --queue: the Redis to remove batches from", { location: { file: "--purge" }, hint: "lllm batch --queue redis://127.0.0.1:6379 --purge [--out FILE]" });
    queueConnection(options.queue);
    return purgeQueue(options.queue, { ...(options.out !== undefined ? { out: options.out } : {}) });
  }
  if (options.status || options.cancel) {
    const flag = options.status ? "--status" : "--cancel";
    if (options.out === undefined) throw new ConfigError("usage_out", `${flag} needs --out: the result file whose provider batch jobs to ${options.status ? "show" : "cancel"}`, { location: { file: flag }, hint: `lllm batch ${flag} --out results.jsonl` });
    if (options.status && options.cancel) throw new ConfigError("usage_out", "--status and --cancel: give one", { location: { file: flag } });
    const { providerJobsCommand } = await import("./providerBatch.js");
    return providerJobsCommand(options.out, options.status ? "status" : "cancel");
  }
  // `-` and our own standard output under another name are standard output, as `--inputs -` is standard input (a
  // file named `-` was made instead; a socket, as Node's child processes get, cannot be opened at all: ENXIO).
  if (options.out !== undefined && ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"].includes(options.out)) options = { ...options, out: undefined };
  if (tacticTarget === undefined) throw new ConfigError("usage_missing_tactic", "missing the tactic to run over the dataset", { hint: "lllm batch TACTIC --inputs items.jsonl --out results.jsonl" });
  const settings = batchSettings(options);
  if (options.queue !== undefined) queueConnection(options.queue); // a bad URL is a usage error before anything loads
  const file = await resolveTacticTarget(tacticTarget, options.package);
  // Loaded, validated and bound once for the whole batch.
  const prepared = await prepareTactic(file, { ...(options.model ? { model: options.model } : {}), ...(options.package ? { packages: options.package } : {}) });
  warnBrokenFiles(prepared.registry);
  warnUnknownModels(prepared.agents, prepared.settings.prices ?? {}, warn, { locate: (agent, position) => modelLocation(prepared.tactic, options.model, agent, position) });
  warnMisspeltVars(prepared, settings.vars, warn);
  if (settings.maxCost !== undefined) refuseUnpricedModels(prepared);
  // What the workers are told to find, checked before anything connects: a tactic they cannot have is refused now.
  const queued = options.queue === undefined ? undefined : queuedTactic(prepared, options.model ?? null);

  // The same batch run again (its --out is there already): items that stopped mid-way resume (see below).
  const rerunOfOut = options.out !== undefined && existsSync(options.out);
  if (options.providerBatch && options.queue !== undefined) throw new ConfigError("usage_queue", "--provider-batch and --queue: give one (the provider runs the model calls of a provider batch)", { location: { file: "--provider-batch" } });
  const live = Boolean(process.stderr.isTTY);
  let providerBatch: ProviderBatch | undefined;
  // The dispatcher is made below, after the progress line: read through this box.
  let dispatched: { waiting: number } | undefined;
  const progress = options.quiet ? undefined : new BatchProgress({ live, total: () => total, extra: () => providerBatch?.progress(), waiting: () => dispatched?.waiting ?? 0 });
  const say = (text: string): void => (progress ? progress.print(text) : writeErr(text));
  // With --provider-batch, items whose state is all in their dialog wait for their jobs as data (parked), and
  // --concurrency is then how many run (replay, tools) at once; the others wait in memory, a window at a time.
  const park = Boolean(options.providerBatch) && (await import("./providerBatch.js")).itemsCanPark(prepared);
  if (park && options.concurrency === undefined) settings.concurrency = PARKED_CONCURRENCY;
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
  if (options.queue === undefined) for (const agent of prepared.agents) modelChain(agent.config).forEach((_, position) => createModel(chainMember(agent.config, position)));
  const stopStarting = new AbortController();
  // A signal the batch does not hold (SIGTERM, SIGHUP, a second Ctrl-C) cancels the running items: no new one may
  // start either, or each item left in the dataset would start, be cancelled at once and leave a run to resume.
  cancel.addEventListener("abort", () => stopStarting.abort(), { once: true });
  if (options.providerBatch) {
    const { startProviderBatch } = await import("./providerBatch.js");
    providerBatch = await startProviderBatch({
      prepared,
      out: options.out,
      live: createModel,
      inFlight: () => stats?.inFlight ?? 0,
      starting: () => stats?.pulling ?? true,
      ...(settings.pollIntervalMs !== undefined ? { pollIntervalMs: settings.pollIntervalMs } : {}),
      ...(maxReplyBytes !== undefined ? { maxReplyBytes } : {}),
      park,
      onStop: () => stopStarting.abort(),
      ...(options.rerunUnknown ? { rerunUnknown: true } : {}),
      say: (text) => say(paint("dim", `lllm batch: ${text}`)),
      warn: (text) => say(`${paint("yellow", "lllm: warning:")} ${text}`),
    });
  }

  // The same batch run again (its --out is there): items whose runs stopped mid-way resume them (not with a provider
  // batch, whose items keep their own journal with their jobs). Only then is the run store read.
  const rerun = rerunOfOut && options.log !== false && !providerBatch && options.queue === undefined;
  const resumes = rerun ? (await import("../batch/ItemResumes.js")).ItemResumes.open({ file: storeFile(process.env, prepared.settings.home), scope: path.resolve(options.out!), prepared, rerunUnknown: Boolean(options.rerunUnknown), warn: (text) => say(`${paint("yellow", "lllm: warning:")} ${text}`) }) : undefined;
  if (resumes) say(paint("dim", `lllm batch: ${resumes.size} item${resumes.size === 1 ? "" : "s"} stopped mid-way in an earlier run: they resume from where they stopped`));
  const output = await BatchOutput.open({ ...(options.out !== undefined ? { file: options.out } : {}), ordered: Boolean(options.ordered), retryFailed: Boolean(options.retryFailed) });
  let total: number | undefined;
  // Counted only when the dataset can be read twice: a pipe or a FIFO (`<(command)`) is read once, by the items,
  // and the progress line then goes without a total.
  if (settings.readTwice) void countLines(settings.inputs).then((count) => (total = settings.format === "csv" ? Math.max(0, count - 1) : count)).catch(() => undefined);

  const batchId = newRunId();
  // Nobody is asked in a batch: --approve decides, default none, and the first refusal says so.
  const approve = options.approve === "all" ? approveAll : options.approve === "none" ? approveNone : noticeFirstRefusal(approveNone, (request) => say(`${paint("yellow", "lllm: warning:")} \`${request.tool}\` needs approval and was refused: a batch asks nobody; pass --approve all to run such tools (or --approve none to refuse them without this warning)`));
  const dispatcher = options.queue === undefined || queued === undefined ? undefined : await startQueue({ rerun: rerunOfOut, url: options.queue, batchId, tacticTarget, queued, prepared, options, settings, cancel, say, onFailure: () => stopStarting.abort() });
  dispatched = dispatcher;
  let stats: BatchStats | undefined;
  /** An item was refused for a call cut short: the provider batch's answers and tool outcomes are kept for its rerun. */
  let keepJournals = false;
  holdFirstSignal(() => {
    stopStarting.abort();
    if (providerBatch) {
      // The items wait for jobs that may take hours: they stop now; the jobs run on at the provider.
      say("lllm: interrupted: the provider batch jobs keep running; run the same command again to pick them up");
      void providerBatch.runner.detach();
      return;
    }
    if (dispatcher) {
      // Items no worker took yet are not running: they are taken back (and written by a rerun), not waited for.
      say("lllm: interrupted: no new items; taking back the items no worker has started (Ctrl-C again to cancel the running ones)");
      void dispatcher.withdrawWaiting().then(
        (count) => say(`lllm: took back ${count} item${count === 1 ? "" : "s"} no worker had started; waiting for those running on workers to finish`),
        () => undefined, // Redis away: the link says so; a second Ctrl-C cancels the rest
      );
      return;
    }
    say(`lllm: interrupted: no new items; waiting for the ${stats?.inFlight ?? 0} running to finish (Ctrl-C again to cancel them)`);
  });
  try {
    stats = await runBatch({
      items: readBatchItems({ file: settings.inputs, format: settings.format, maxLineBytes: settings.maxLineBytes }),
      output,
      concurrency,
      stopStarting: stopStarting.signal,
      ...(options.failFast ? { failFast: true } : {}),
      ...(settings.format === "lines" ? { uniqueIds: true } : {}),
      ...(settings.maxCost !== undefined ? { maxCost: settings.maxCost } : {}),
      ...(settings.maxTokens !== undefined ? { maxTokens: settings.maxTokens } : {}),
      spentBefore: output.spent,
      ...(providerBatch ? { committedCost: () => providerBatch!.runner.committedCost } : {}),
      onStart: (live) => {
        stats = live;
        progress?.update(live);
      },
      ...(providerBatch?.parked ? { parked: providerBatch.parked } : {}),
      runItem: dispatcher
        ? (item) => dispatcher.run(item)
        : (item, again) => {
            const attempt = providerBatch?.parked ? providerBatch.attempt(item.id, cancel, again) : undefined;
            const inMemory = providerBatch && !attempt ? providerBatch.modelsFor(item.id) : undefined;
            return runBatchItem(item, {
              prepared,
              batchId,
              createModel: attempt ? attempt.createModel : inMemory ? inMemory.createModel : createModel,
              vars: settings.vars,
              ...(settings.maxSteps !== undefined ? { maxSteps: settings.maxSteps } : {}),
              approve,
              signal: attempt ? attempt.signal : cancel,
              ...(options.log !== undefined ? { log: options.log } : {}),
              warn: (message) => say(`${paint("yellow", "lllm: warning:")} ${message}`),
              ...(attempt ? { wrapTool: attempt.wrapTool, attempt: { parked: () => attempt.parked, ...(again?.recordId !== undefined ? { recordId: again.recordId } : {}), ...(again ? { startedAt: again.startedAt } : {}) } } : {}),
              ...(inMemory ? { wrapTool: inMemory.wrapTool } : {}),
              ...(options.out !== undefined && !providerBatch ? { batchItem: batchItemKey(path.resolve(options.out), item.id) } : {}),
              ...(resumes ? resumeOf(resumes, item.id) : {}),
            })
              .then((result) => {
                // Refused to go on past a call its stop cut short: its journal is kept for the rerun that allows it.
                if (!("parked" in result) && result.error?.code === "resume_unknown_call") keepJournals = true;
                return attempt && "parked" in result ? { ...result, cost: attempt.parkedCost } : result;
              })
              .finally(() => {
                attempt?.dispose();
                // A parked item's answered turns stay committed until its line is written.
                if (!attempt?.parked) providerBatch?.itemDone(item.id);
              });
          },
    });
    // Stopped by --max-cost before their items started: the jobs an earlier run left at the provider are paid for.
    if (stats.stoppedBy === "budget") await providerBatch?.collect();
  } finally {
    progress?.stop();
    resumes?.close();
    await providerBatch?.close({ complete: stats !== undefined && stats.stoppedBy === undefined && stats.cancelled === 0 && !keepJournals });
    try {
      output.close(); // throws when the last lines cannot be written (a full disk)
    } finally {
      await dispatcher?.close();
    }
  }
  const out = options.out;
  if (stats.duplicates > 0) say(`${paint("yellow", "lllm: warning:")} ${duplicatesWarning(stats)}`);
  reportSummary(stats, { batchId, ...(out !== undefined ? { out } : {}), quiet: Boolean(options.quiet), notes: providerBatch?.summaryNotes() ?? [] });
  // Redis gone for too long, or every worker refuses the batch: the items not done are not written (a rerun runs them).
  if (dispatcher?.failure) throw dispatcher.failure;
  // A provider job cancelled while the batch ran: it stopped (the items not done are not written).
  if (providerBatch?.failure) throw providerBatch.failure;
  if (stats.unpricedItem !== undefined) throw unpricedError(prepared, `item ${stats.unpricedItem} called a model that has no known price, so the batch stopped starting items`);
  if (stats.stoppedBy === "budget") throw budgetError(stats, { ...settings, spentBefore: output.spent, ...(out !== undefined ? { out } : {}) });
  if (stats.stoppedBy === "interrupted") return; // the signal handler's exit code (130) stands
  if (stats.failed + stats.skippedFailed + stats.duplicates > 0) process.exitCode = 1;
}

/** An item's resume, when its run stopped mid-way in an earlier run of the batch. */
function resumeOf(resumes: ItemResumes, itemId: string): { resume?: ItemResume } {
  const resume = resumes.of(itemId);
  return resume ? { resume } : {};
}

/** --queue: announce the batch on Redis; items become jobs that `lllm worker`s run. */
async function startQueue(context: { rerun: boolean; url: string; batchId: string; tacticTarget: string; queued: QueuedTactic; prepared: Awaited<ReturnType<typeof prepareTactic>>; options: BatchCommandOptions; settings: BatchSettings; cancel: AbortSignal; say: (text: string) => void; onFailure: (error: LllmError) => void }): Promise<QueueDispatcher> {
  const { options, settings, prepared } = context;
  const shownUrl = redactQueueUrl(context.url);
  const dispatcher = await QueueDispatcher.open({
    url: context.url,
    cancel: context.cancel,
    warn: (message) => context.say(`${paint("yellow", "lllm: warning:")} ${message}`),
    say: (message) => context.say(paint("dim", `lllm batch: ${message}`)),
    onFailure: context.onFailure,
    announcement: {
      batchId: context.batchId,
      tactic: context.tacticTarget,
      queued: context.queued,
      packages: prepared.registry.list().map((pkg) => ({ name: pkg.name, version: pkg.manifest.version ?? null })),
      model: options.model ?? null,
      digest: queueDigest(prepared),
      vars: settings.vars,
      maxSteps: settings.maxSteps ?? null,
      timeout: settings.timeout ?? null,
      approve: options.approve === "all" ? "all" : "none",
      producer: { host: hostname(), pid: process.pid },
      out: options.out !== undefined ? path.resolve(options.out) : null,
      ...(context.rerun ? { rerun: true } : {}),
      ...(options.rerunUnknown ? { rerunUnknown: true } : {}),
    },
  });
  const needs = context.queued.kind === "ref" ? [context.queued.ref.slice(0, context.queued.ref.indexOf(".tactics:"))] : context.queued.packageNames;
  const packages = needs.length > 0 ? ` (with a copy of ${needs.map((name) => `\`${name}\``).join(", ")}: -p DIR)` : "";
  // Told once a worker had a second to come (one started with the batch, or running already): a user whose workers
  // are there is not told to start one. The items go to the queue meanwhile. A worker that refuses the batch says why.
  void dispatcher.liveWorkers(FIRST_WORKER_MS).then((live) => {
    if (live === undefined) return;
    const where = `lllm batch: batch ${context.batchId} is on ${shownUrl}`;
    context.say(paint("dim", live > 0 ? `${where}; ${live} worker${live === 1 ? " is" : "s are"} connected` : `${where}; start \`lllm worker --queue ${shownUrl}\`${packages} to run its items`));
  });
  return dispatcher;
}

/** How long a queued batch waits for a first worker before it says how to start one. */
const FIRST_WORKER_MS = 1000;

interface BatchSettings {
  inputs: string;
  /** The dataset is a regular file: it can be read twice (counted for the progress line's total, then read). */
  readTwice: boolean;
  maxLineBytes: number;
  format: DatasetFormat;
  concurrency: number;
  vars: Record<string, string>;
  maxSteps?: number;
  timeout?: number;
  rpm?: number;
  tpm?: number;
  maxCost?: number;
  maxTokens?: number;
  pollIntervalMs?: number;
}

/**
 * Items running at once with --provider-batch by default: each round's job holds the requests of this many items
 * (a job of 10,000 requests, not 10,000 calls).
 */
const PROVIDER_BATCH_CONCURRENCY = 10_000;

/**
 * Items running at once with --provider-batch when they wait as data (parked): those replaying their answered turns
 * or running their tools. Waiting items hold no slot, so every item's request can go into the same round's job.
 */
const PARKED_CONCURRENCY = 100;

/** Every flag checked before anything runs: a typo must not surface after an hour of paid calls. */
function batchSettings(options: BatchCommandOptions): BatchSettings {
  // Our own standard input under another name: read as `-` (a socket, as Node's child processes get, cannot be opened).
  const inputs = options.inputs !== undefined && ["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"].includes(options.inputs) ? "-" : options.inputs;
  if (inputs === undefined) throw new ConfigError("usage_inputs", "missing --inputs: the dataset to run the tactic over", { location: { file: "--inputs" }, hint: "lllm batch TACTIC --inputs items.jsonl --out results.jsonl (JSONL, CSV, or text lines with --lines; `-` for standard input)" });
  let readTwice = false;
  if (inputs !== "-") {
    if (!existsSync(inputs)) throw new ConfigError("usage_inputs", `the dataset \`${inputs}\` does not exist`, { location: { file: "--inputs" } });
    // A pipe, a FIFO (`<(command)`), /dev/stdin: read once, as a stream, like a file.
    const stat = statSync(inputs);
    if (stat.isDirectory()) throw new ConfigError("usage_inputs", `the dataset \`${inputs}\` is a folder, not a file`, { location: { file: "--inputs" } });
    readTwice = stat.isFile();
  }
  if (options.out !== undefined && existsSync(options.out) && statSync(options.out).isDirectory()) throw new ConfigError("usage_out", `--out \`${options.out}\` is a folder: give a file (results.jsonl)`, { location: { file: "--out" } });
  if (options.lines && options.format !== undefined && options.format !== "lines") throw new ConfigError("usage_format", `--lines and --format ${options.format} disagree: give one`, { location: { file: "--lines" } });
  const format: DatasetFormat = options.lines ? "lines" : options.format ?? (path.extname(inputs).toLowerCase() === ".csv" ? "csv" : "jsonl");
  if (options.out !== undefined && path.resolve(options.out) === path.resolve(inputs)) throw new ConfigError("usage_out", "--out is the dataset itself: give another file", { location: { file: "--out" } });
  const maxLineBytes = options.maxLineSize === undefined ? DEFAULT_MAX_LINE_BYTES : sizeInBytes(options.maxLineSize, "--max-line-size");
  const settings: BatchSettings = { inputs, readTwice, maxLineBytes, format, concurrency: positiveInteger(options.concurrency ?? (options.queue !== undefined ? "100" : options.providerBatch ? String(PROVIDER_BATCH_CONCURRENCY) : "4"), "--concurrency", "e.g. --concurrency 16"), vars: parseVars(options.var ?? []) };
  if (options.maxSteps !== undefined) settings.maxSteps = positiveInteger(options.maxSteps, "--max-steps", "e.g. --max-steps 5", 0);
  if (options.timeout !== undefined) settings.timeout = positiveNumber(options.timeout, "--timeout", "seconds, e.g. --timeout 300");
  if (options.rpm !== undefined) settings.rpm = positiveInteger(options.rpm, "--rpm", "model requests per minute, e.g. --rpm 500");
  if (options.tpm !== undefined) settings.tpm = positiveInteger(options.tpm, "--tpm", "tokens per minute, e.g. --tpm 200000");
  if (options.maxCost !== undefined) settings.maxCost = positiveNumber(options.maxCost, "--max-cost", "US dollars, e.g. --max-cost 5");
  if (options.maxTokens !== undefined) settings.maxTokens = positiveInteger(options.maxTokens, "--max-tokens", "e.g. --max-tokens 1000000");
  if (options.pollInterval !== undefined) {
    if (!options.providerBatch) throw new ConfigError("usage_number", "--poll-interval is for --provider-batch", { location: { file: "--poll-interval" } });
    settings.pollIntervalMs = positiveNumber(options.pollInterval, "--poll-interval", "seconds, e.g. --poll-interval 30") * 1000;
  }
  return settings;
}

function positiveNumber(text: string, flag: string, hint: string): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || value <= 0) throw new ConfigError("usage_number", `${flag} must be a number above 0 (got \`${text}\`)`, { location: { file: flag }, hint });
  return value;
}

/** `64M`, `1G`, `512K`, `1.5g` -> bytes; a bare number is megabytes (as the sandbox's sizes). */
function sizeInBytes(text: string, flag: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmg]?)i?b?\s*$/i.exec(text);
  const units: Record<string, number> = { "": 1024 * 1024, k: 1024, m: 1024 * 1024, g: 1024 * 1024 * 1024 };
  const bytes = match ? Math.floor(Number(match[1]) * units[match[2]!.toLowerCase()]!) : NaN;
  if (!(bytes >= 1)) throw new ConfigError("usage_number", `${flag} must be a size such as 64M or 256M (got \`${text}\`)`, { location: { file: flag }, hint: "A bare number is megabytes." });
  if (bytes > MAX_LINE_BYTES) throw new ConfigError("usage_number", `${flag} ${text} is over the longest line Node can read (${Math.floor(MAX_LINE_BYTES / 1024 / 1024)}M)`, { location: { file: flag }, hint: `e.g. ${flag} 256M` });
  return bytes;
}
