import path from "node:path";
import type { AgentConfig } from "../config/index.js";
import { ConfigError, type ProviderError } from "../errors.js";
import type { Model } from "../providers/Model.js";
import { BatchJobStore, type StoredJob } from "../batch/provider/BatchJobStore.js";
import { BatchGroups, itemAttempt, itemModels, itemKey, type ItemAttempt, type ItemModels } from "../batch/provider/providerBatchModels.js";
import { ParkedItems, type ParkedEntry } from "../batch/ParkedItems.js";
import type { ItemHistory } from "../batch/provider/ItemHistory.js";
import { whyNotParkable } from "../batch/provider/whyNotParkable.js";
import { providerText } from "../batch/provider/providerText.js";
import { ProviderBatchRunner } from "../batch/provider/ProviderBatchRunner.js";
import { loadProjectSettings } from "../config/index.js";
import { PriceTable } from "../providers/PriceTable.js";
import { storeFile } from "../store/startRunLog.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import { writeErr, writeOut } from "./output.js";

export interface ProviderBatch {
  runner: ProviderBatchRunner;
  /** The models and tool journal of one item's run (items that wait in memory). */
  modelsFor(itemId: string): ItemModels;
  /** The items waiting as data, when the tactic's items can (see `whyNotParkable`); then each run is an `attempt`. */
  parked?: ParkedItems;
  /** One attempt of an item that parks at its first request without an answer. */
  attempt(itemId: string, cancel: AbortSignal, again?: ParkedEntry): ItemAttempt;
  /** The item's result line is written. */
  itemDone(itemId: string): void;
  /** For the progress line: jobs, and the time since the oldest running one was submitted. */
  progress(): string | undefined;
  /** Why the batch had to stop (a job cancelled while it ran): the CLI's error, after the summary. */
  readonly failure: ProviderError | undefined;
  /**
   * After --max-cost stopped the batch: wait for the jobs still at the provider (an earlier run's, whose items did not
   * start) to end, their answers stored for the next run (Ctrl-C stops waiting).
   */
  collect(): Promise<void>;
  /** What the summary adds: answers of jobs that were not used. */
  summaryNotes(): string[];
  /** Stop polling; forget the answers when every item is done. */
  close(options: { complete: boolean }): Promise<void>;
}

export interface ProviderBatchOptions {
  prepared: PreparedTactic;
  out: string | undefined;
  pollIntervalMs?: number;
  /** The live models (agents whose provider has no batch API). */
  live: (config: AgentConfig) => Model;
  inFlight: () => number;
  starting: () => boolean;
  maxReplyBytes?: number;
  /** Items wait for their jobs as data, not as suspended runs (see `whyNotParkable`). */
  park: boolean;
  /** The batch must stop (see `ProviderBatchRunnerOptions.onStop`): start no more items. */
  onStop: () => void;
  /** `--rerun-unknown`: a parked item's call cut short by a kill runs again whatever its tool says. */
  rerunUnknown?: boolean;
  say: (text: string) => void;
  warn: (text: string) => void;
}

/**
 * Whether the tactic's items can wait for their jobs as data (see `whyNotParkable`): also, every agent's model must
 * have a batch API, as a model called live would be called again at every attempt of a parked item.
 */
export function itemsCanPark(prepared: PreparedTactic): boolean {
  if (whyNotParkable(prepared) !== undefined) return false;
  const groups = new BatchGroups(prepared.settings.prices ? { prices: prepared.settings.prices } : {});
  return prepared.agents.every((agent) => groups.of(agent.config) !== undefined);
}

/**
 * Set up `--provider-batch`, refusing before anything is submitted what cannot work (exit 2): no --out (the jobs are
 * kept by it), a missing key, a model not in the price table, a tactic none of whose agents has a batch API.
 */
export async function startProviderBatch(options: ProviderBatchOptions): Promise<ProviderBatch> {
  const { prepared } = options;
  if (options.out === undefined) throw new ConfigError("usage_out", "--provider-batch needs --out: its jobs are kept by the result file, so that running the same command again polls them", { location: { file: "--provider-batch" }, hint: "lllm batch TACTIC --inputs items.jsonl --out results.jsonl --provider-batch" });
  const groups = new BatchGroups({ ...(prepared.settings.prices ? { prices: prepared.settings.prices } : {}), ...(options.maxReplyBytes !== undefined ? { maxReplyBytes: options.maxReplyBytes } : {}) });
  const table = PriceTable.load(prepared.settings.prices);
  let batched = 0;
  const liveModels = new Set<string>();
  for (const agent of prepared.agents) {
    const group = groups.of(agent.config); // a missing key: the ConfigError of createModel
    if (!group) {
      liveModels.add(agent.config.model_name);
      continue;
    }
    if (!table.priceOf(agent.config.model_name)) {
      throw new ConfigError("config_invalid_model", `model \`${agent.config.model_name}\` (agent \`${agent.config.name}\`) is not in lllm's model table: a batch job for it could fail only hours later, and its batch price is unknown`, {
        hint: "check the name with `lllm models`; for a new model, give its price in the settings' `prices:` (input, output; batch_input and batch_output default to half)",
      });
    }
    batched += 1;
  }
  if (batched === 0) {
    throw new ConfigError("batch_provider_unsupported", `no agent of the tactic uses a provider with a batch API (${[...liveModels].map((name) => `\`${name}\``).join(", ")})`, {
      location: { file: "--provider-batch" },
      hint: "--provider-batch works with OpenAI (chat completions), Anthropic and Gemini models; run without it to call the models live",
    });
  }
  if (liveModels.size > 0) options.warn(`${[...liveModels].map((name) => `\`${name}\``).join(", ")} ha${liveModels.size === 1 ? "s" : "ve"} no provider batch API: ${liveModels.size === 1 ? "its" : "their"} calls run live, at the live price`);
  const out = path.resolve(options.out);
  const store = BatchJobStore.open(storeFile(process.env, prepared.settings.home), out);
  const parked = options.park ? new ParkedItems(store, itemKey) : undefined;
  const runner = new ProviderBatchRunner({
    store,
    groupOf: (config) => {
      try {
        return groups.fromStored(config);
      } catch {
        return undefined;
      }
    },
    ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    inFlight: options.inFlight,
    starting: options.starting,
    ...(parked
      ? {
          onReady: (keys: string[]) => parked.ready(keys),
        }
      : {}),
    onStop: options.onStop,
    say: options.say,
    warn: options.warn,
  });
  const byTurn = store.requestsNamedByTurn();
  if (byTurn > 0) options.warn(`${byTurn} request${byTurn === 1 ? "" : "s"} of ${options.out} ${byTurn === 1 ? "was" : "were"} made by an earlier lllm, which named requests otherwise: their items ask again, in new jobs (paid again)`);
  const resumed = await runner.resumeJobs();
  // A rerun runs every unfinished item from the dataset again: the parked items of a killed run are stale, and so
  // are the bodies of its requests that wait for no job (those of a submission the provider never got included).
  store.clearParked();
  if (resumed > 0) options.say(`polling ${resumed} provider batch job${resumed === 1 ? "" : "s"} submitted by an earlier run`);
  return {
    runner,
    modelsFor: (itemId) => itemModels(itemId, { runner, groups, live: options.live, store, ...(options.rerunUnknown ? { rerunUnknown: true } : {}) }),
    ...(parked ? { parked } : {}),
    attempt: (itemId, cancel, again) => itemAttempt(itemId, { runner, groups, live: options.live, store, cancel, ...(again?.cost !== undefined ? { parkedCost: again.cost } : {}), ...(again?.history ? { history: again.history as ItemHistory } : {}), ...(options.rerunUnknown ? { rerunUnknown: true } : {}) }),
    itemDone: (itemId) => runner.itemDone(itemKey(itemId)),
    progress: () => {
      const { jobs, since } = runner.running;
      const parts = [`${runner.jobsSubmitted + resumed} job${runner.jobsSubmitted + resumed === 1 ? "" : "s"}`];
      if (jobs > 0) parts.push(`${jobs} running${since !== undefined ? ` for ${formatAge(Date.now() - since)}` : ""}`);
      parts.push(`${runner.waiting + (parked?.size ?? 0)} waiting`);
      return parts.join(", ");
    },
    get failure() {
      return runner.failure;
    },
    collect: async () => {
      const { jobs } = runner.running;
      if (jobs === 0) return;
      const one = jobs === 1;
      options.say(`--max-cost stops the batch; waiting for the ${jobs} provider batch job${one ? "" : "s"} already submitted to end (${one ? "it is" : "they are"} paid for); Ctrl-C leaves ${one ? "it" : "them"} running at the provider`);
      const ended = runner.jobsEnded;
      await runner.collect();
      if (runner.running.jobs === 0) options.say(`${runner.jobsEnded - ended} job${runner.jobsEnded - ended === 1 ? "" : "s"} ended: ${one ? "its" : "their"} answers are kept, and the same command with a higher --max-cost uses them instead of submitting again`);
    },
    summaryNotes: () => {
      const { twice, foreign } = runner.refused;
      if (twice + foreign === 0) return [];
      const parts = [...(twice > 0 ? [`${twice} request${twice === 1 ? "" : "s"} whose id came more than once (asked again)`] : []), ...(foreign > 0 ? [`${foreign} answer${foreign === 1 ? "" : "s"} with the id of no request of ${foreign === 1 ? "its" : "their"} job`] : [])];
      return [`answers of provider batch jobs refused: ${parts.join("; ")}: the warnings above name them`];
    },
    close: async ({ complete }) => {
      await runner.detach();
      store.clearParked();
      if (complete) store.forgetAnswers();
      store.close();
    },
  };
}

/** `lllm batch --status --out FILE` and `--cancel`: the jobs of FILE, asked of their providers once (no waiting). */
export async function providerJobsCommand(out: string, action: "status" | "cancel"): Promise<void> {
  const { settings } = await loadProjectSettings(process.cwd());
  const store = BatchJobStore.open(storeFile(process.env, settings.home), path.resolve(out));
  try {
    const jobs = store.jobs();
    if (jobs.length === 0) {
      writeErr(`lllm batch: no provider batch jobs for ${out}`);
      return;
    }
    const groups = new BatchGroups({ ...(settings.prices ? { prices: settings.prices } : {}) });
    let cancelled = 0;
    for (const job of jobs) {
      let line = describeJob(job);
      if (job.state === "running" || job.state === "cancelling") {
        try {
          const group = groups.fromStored(job.config);
          if (!group) throw new Error("its settings have no batch API");
          if (action === "cancel") {
            await group.api.cancel(job.jobId);
            // Marked for a batch running on this --out file: it stops at its next poll instead of submitting again.
            store.cancelRequested(job.jobId, "cancelling");
            cancelled += 1;
            line = describeJob({ ...job, state: "cancelling", providerState: "cancelling" });
          } else {
            const status = await group.api.status(job.jobId);
            store.setJobState(job.jobId, "running", status.providerState);
            line = describeJob({ ...job, providerState: status.providerState }, status);
          }
        } catch (error) {
          line += ` (cannot ${action === "cancel" ? "cancel" : "ask"} ${job.provider}: ${providerText(error instanceof Error ? error.message : String(error))})`;
        }
      }
      writeOut(`${line}\n`);
    }
    if (action === "cancel") {
      const one = cancelled === 1;
      writeErr(
        cancelled === 0
          ? "lllm batch: no job of this --out file is running at the provider: nothing to cancel"
          : `lllm batch: ${cancelled} job${one ? "" : "s"} cancelled at the provider. An \`lllm batch\` running on ${out} stops at its next poll, and submits nothing again. Running the same command again takes what ${one ? "the job" : "the jobs"} answered before ${one ? "it was" : "they were"} cancelled, and submits ${one ? "its" : "their"} other requests again, in new jobs (paid again).`,
      );
    }
  } finally {
    store.close();
  }
}

function describeJob(job: StoredJob, counts?: { done?: number; failed?: number; total?: number }): string {
  // The id and the state are the provider's text: one row of tab-separated columns whatever they hold.
  const state = job.state === "running" || job.state === "cancelling" ? `${job.state} (${providerText(job.providerState ?? "submitted")})` : job.state;
  const done = counts?.done !== undefined ? `, ${counts.done}/${counts.total ?? job.requests} done${counts.failed ? ` (${counts.failed} failed)` : ""}` : "";
  return `${job.provider}\t${providerText(job.jobId)}\t${state}\t${job.requests} request${job.requests === 1 ? "" : "s"}${done}\tsubmitted ${formatAge(Date.now() - job.submittedAt)} ago`;
}

function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
