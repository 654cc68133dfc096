import { CodeActionError } from "../codeaction/CodeActionErrors.js";
import { codeActionReportJson, type CodeActionReport } from "../codeaction/CodeActionReport.js";
import { InterruptedError } from "../errors.js";
import { startRunLog, type RunLog } from "../store/startRunLog.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import { runTactic } from "../tactics/runTactic.js";
import type { RunOptions, TacticResult } from "../tactics/TacticRun.js";
import { runModels } from "../tactics/runModels.js";
import { replySizeBytes } from "../config/index.js";
import type { FunctionTool } from "../tools/index.js";
import type { RunJournal } from "../store/journal/RunJournal.js";
import type { ToolJournal } from "../store/journal/ToolJournal.js";
import { recordedToolJournal } from "../store/journal/recordedToolJournal.js";
import type { ResumeFlags } from "../store/SpoolEntry.js";
import { assertTemplateVariables } from "../tactics/templateVariables.js";
import { programDetailsJson } from "../tactics/tacticResultJson.js";
import { UsageCounter } from "../tactics/UsageCounter.js";
import { startRunBudget } from "../tactics/tacticBudget.js";
import { hasLimits, type RunBudget, type RunLimits, type SpendReport } from "../limits/index.js";
import { spendJson } from "./spendJson.js";
import type { ServedRunInfo } from "../store/RunRecord.js";

export interface RecordedRunOptions extends RunOptions {
  /** `false` records nothing (`--no-log`); `LLLM_LOG=0` and `log: false` in the project settings do the same. */
  log?: boolean;
  /** The run this one continues (`lllm run --continue`), kept in its record. */
  continuesRun?: string;
  /** The batch this run is an item of (`lllm batch`), kept in its record. */
  batchId?: string;
  /** The test case this run is (`lllm test`): its test file and name, kept in its record. */
  test?: { file: string; case: string };
  /** How `lllm serve` was asked for this run (route, model, client, ids), kept in its record. */
  served?: ServedRunInfo;
  /** The environment's credentials as a server read them when it started, for the record's redaction (startRunLog). */
  environmentSecrets?: readonly string[];
  /**
   * Record under this id: that of an earlier attempt of the same run, which this one repeats from its start (a batch
   * item run again when its provider batch job ends). Its lines are written again and merged once.
   */
  recordId?: string;
  /**
   * Asked when the run fails: `true` leaves its record open (still running), because the run is not over but parked,
   * and a later attempt under the same `recordId` closes it.
   */
  parked?: () => boolean;
  /** Told when the run store cannot be written (the run goes on unrecorded). */
  warn: (message: string) => void;
  /** How the caller's user gives a missing template variable a value (the error's hint); default: `--var`. */
  missingVariableHint?: (name: string) => string;
  /**
   * The flags of `lllm run` that shaped the run, kept in its record so that `lllm run --resume` runs it the same way.
   * A run recorded with them (`{}` at least), or as a batch item, can be resumed.
   */
  flags?: ResumeFlags;
  /** The batch item this run is (`batchItemKey`): a batch run again resumes the item's stopped run. */
  batchItem?: string;
  /**
   * Resume a recorded run (`lllm run --resume`): its recorded model answers and tool outcomes are replayed (the run
   * is given its recorded input again), the run goes on live from its first step without one, and it is recorded
   * under its id as a later attempt.
   */
  resume?: RunJournal;
  /**
   * Whether a call of a resumed run that its stop cut short may run again though its tool does not say it is safe
   * (`--rerun-unknown`, or the user said yes at the terminal).
   */
  rerunUnknown?: (call: { key: string; agent: string; name: string }) => boolean;
  /** Told the run's id in the run store as soon as its record is open (before the run starts). */
  onRecorded?: (runId: string) => void;
  /**
   * Counts the run's model calls as they happen. Pass one to read the usage while the run is still going (the CLI
   * reports it when a tool never settles); by default the run makes its own.
   */
  usage?: UsageCounter;
}

/** The model calls and tokens of a recorded run; cached and reasoning tokens as the providers reported them. */
export interface RecordedUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  llmCalls: number;
  /** Part of `promptTokens`; 0 when the run was not recorded. */
  cachedPromptTokens: number;
  /** Part of `completionTokens`; 0 when the run was not recorded. */
  reasoningTokens: number;
}

/** What a recorded run spent, and where it is recorded: known for a failed run too. */
interface RecordedRunTotals {
  usage: RecordedUsage;
  /** US dollars; `null` when a model's price is unknown, or nothing was recorded (dry run, failed check). */
  cost: number | null;
  /** The run's id in the run store, when it was recorded. */
  runId?: string;
  /** What the run tree spent, by agent and by tool; absent when a check stopped the run before it started. */
  spend?: SpendReport;
  /** The limits the run ran under, when it had any. */
  limits?: RunLimits;
  /** A resumed run: its attempt, and the model answers and tool outcomes it took from its journal. */
  resumed?: { attempt: number; replayedModelCalls: number; replayedToolCalls: number };
}

export interface RecordedRunSuccess extends RecordedRunTotals {
  ok: true;
  result: TacticResult;
  /** `3 model calls, 1,200 + 85 tokens, $0.0012, 2.1 s` (empty for a dry run), for `--verbose`. */
  summary: string;
}

export interface RecordedRunFailure extends RecordedRunTotals {
  ok: false;
  /** The run's error; an `InterruptedError` when `signal` aborted the run. */
  error: unknown;
  /** A code-action run's report (attempts, programs, the error), when the failed run has one. */
  codeAction?: CodeActionReport;
}

export type RecordedRun = RecordedRunSuccess | RecordedRunFailure;

/**
 * Run a prepared tactic once, as `lllm run` and each item of `lllm batch` do: check the template variables (a run
 * they stop is not recorded), open the run's record in the run store, run the tactic while counting its usage and
 * feeding its events to the record, and close the record with the answer or the error.
 *
 * A failure is returned (`ok: false`, with what the run spent), never thrown, so that the caller can report it in
 * its own shape; a run stopped by `signal` fails with an `InterruptedError`. A dry run (`dryRun`) is not recorded.
 */
export async function runRecorded(prepared: PreparedTactic, options: RecordedRunOptions): Promise<RecordedRun> {
  const { log, continuesRun, batchId, test, served, environmentSecrets, recordId, parked, warn, missingVariableHint, usage: given, flags, batchItem, resume, rerunUnknown, onRecorded, ...runOptions } = options;
  const usage = given ?? new UsageCounter();
  let runLog: RunLog | undefined;
  let budget: RunBudget | undefined;
  let journal: ToolJournal | undefined;
  let onExit: (() => void) | undefined;
  /** `head` with the run's totals. */
  const withTotals = <T extends object>(head: T): T & RecordedRunTotals => {
    const stored = runLog?.tally.usage;
    // A resumed run's totals are the record's (every attempt's calls), as its cost is: what this attempt replayed may
    // be less (it stopped early, or asked an answer again).
    const spent = resume ? runLog?.recorder?.spent() : undefined;
    return Object.assign(head, {
      usage: spent
        ? { promptTokens: spent.usage.promptTokens, completionTokens: spent.usage.completionTokens, totalTokens: spent.usage.promptTokens + spent.usage.completionTokens, llmCalls: spent.llmCalls, cachedPromptTokens: spent.usage.cachedPromptTokens, reasoningTokens: spent.usage.reasoningTokens }
        : { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, totalTokens: usage.totalTokens, llmCalls: usage.llmCalls, cachedPromptTokens: stored?.cachedPromptTokens ?? 0, reasoningTokens: stored?.reasoningTokens ?? 0 },
      // The record's: a resumed run's cost is the whole run's, even when this attempt stopped before replaying it all.
      cost: runLog?.recorder?.spent().cost ?? runLog?.tally.cost ?? null,
      ...(runLog?.recorder ? { runId: runLog.recorder.id } : {}),
      ...(budget ? { spend: budget.report() } : {}),
      ...(budget && hasLimits(budget.limits) ? { limits: budget.limits } : {}),
      ...(resume ? { resumed: { attempt: resume.attempt, replayedModelCalls: resume.replayedModelCalls, replayedToolCalls: journal?.replayedCalls ?? 0 } } : {}),
    });
  };
  /** Kept with the run's record (when there is one): where the spend went, and the limits it ran under. */
  const spendDetails = (): Record<string, unknown> => (budget && runLog?.recorder ? { spend: spendJson(budget.report(), budget.limits) } : {});
  try {
    assertTemplateVariables(prepared, { ...(runOptions.vars ?? {}) }, missingVariableHint ? { hint: missingVariableHint } : {});
    // Before the record opens: a model without a price under a cost limit stops the run before it starts.
    // A resumed run's limits hold for the whole run: its replayed steps count again, and the time the earlier attempts took.
    budget = runOptions.budget ?? startRunBudget(prepared, runOptions.limits, resume ? { earlierMs: resume.earlierMs } : undefined, runOptions.limitSources);
    if (!runOptions.dryRun) {
      const input = typeof runOptions.input === "string" ? runOptions.input : JSON.stringify(runOptions.input);
      runLog = await startRunLog({
        prepared,
        input,
        vars: runOptions.vars ?? {},
        ...(log !== undefined ? { log } : {}),
        ...(continuesRun !== undefined ? { continuesRun } : {}),
        ...(batchId !== undefined ? { batchId } : {}),
        ...(test !== undefined ? { test } : {}),
        ...(served !== undefined ? { served } : {}),
        ...(environmentSecrets !== undefined ? { environmentSecrets } : {}),
        ...(recordId !== undefined ? { recordId } : {}),
        ...(flags !== undefined ? { flags } : {}),
        ...(batchItem !== undefined ? { batchItem } : {}),
        ...(resume ? { resume: { journal: resume, replayed: { reply: (value) => resume.replayedReply(value), call: (value) => journal?.answered(value) === true } } } : {}),
        ...(runOptions.env ? { env: runOptions.env } : {}),
        warn,
      });
    }
    const recorder = runLog?.recorder;
    // A run stopped by a signal whose tool never settles (a TypeScript tool that ignores its abort) is ended by the
    // CLI's exit after its grace: its end is written then, as the stop it was (interrupted, with what it spent), not
    // left for `lllm logs` to find as a crash. Before the spool's own exit hook, which closes the file.
    if (recorder) {
      onExit = () => {
        if (runOptions.signal?.aborted) recorder.finish({ error: interruptionOf(runOptions.signal, undefined), details: spendDetails() });
      };
      atExit(onExit);
    }
    // The journal of a run that can be resumed: each tool call noted before it runs and its outcome kept when it ends
    // (a caller that wraps the tools itself, a provider batch item, keeps its own); a resume answers from it.
    if (recorder?.journaled && !runOptions.wrapTool) journal = recordedToolJournal(recorder, resume, rerunUnknown);
    const runId = recorder?.id;
    if (runId !== undefined) onRecorded?.(runId);
    const tacticOptions: RunOptions = {
      ...runOptions,
      budget,
      // Programs' files go to the folder named by the run's id in the store (`lllm logs show ID` and the folder agree).
      ...(runId !== undefined ? { runId } : {}),
      onModelRetry: (notice) => {
        runOptions.onModelRetry?.(notice);
        runLog?.onRetry(notice);
      },
      onEvent: (event) => {
        if (event.type === "model_reply") usage.add(event.usage);
        runLog?.onEvent(event);
        runOptions.onEvent?.(event);
      },
      ...(journal ? { wrapTool: (tool: FunctionTool, agent: string) => journal!.wrap(tool, agent) } : {}),
    };
    if (resume) {
      // Every model asks the journal first; the approvals given then are not asked again.
      const live = runOptions.createModel ?? runModels(tacticOptions, replySizeBytes(prepared.settings.reply_size));
      tacticOptions.createModel = async (config) => resume.model(await live(config));
      if (runOptions.approve) tacticOptions.approve = resume.approval(runOptions.approve);
    }
    // The answer that ended the resumed run, asked for again: what it cost counts with the run, as a replayed one.
    const askedAgain = resume?.askedAgainReply();
    if (askedAgain) {
      budget.countAnswer(askedAgain.agent, { usage: askedAgain.usage, ...(askedAgain.model !== undefined ? { model: askedAgain.model } : {}) }, askedAgain.model ?? "");
      tacticOptions.onEvent?.(askedAgain);
    }
    const result = await runTactic(prepared, tacticOptions);
    await runLog?.finish({ output: result.output, details: { ...programDetailsJson(result), ...spendDetails() } });
    // The summary is made when read (`lllm run --verbose`), not for every batch item.
    const finished = runLog;
    return withTotals({
      ok: true as const,
      result,
      get summary(): string {
        return finished ? finished.tally.summary(result.durationMs) : "";
      },
    });
  } catch (caught) {
    const signal = runOptions.signal;
    const error = signal?.aborted ? interruptionOf(signal, caught) : caught;
    const codeAction = caught instanceof CodeActionError ? caught.report : undefined;
    if (!parked?.()) await runLog?.finish({ error, details: { ...(codeAction !== undefined ? { code_action: codeActionReportJson(codeAction) } : {}), ...spendDetails() } });
    return withTotals({ ok: false as const, error, ...(codeAction !== undefined && error === caught ? { codeAction } : {}) });
  } finally {
    if (onExit) runsAtExit.delete(onExit);
    if (!runOptions.budget) budget?.close();
  }
}

/**
 * What the runs still going do when the process exits: one listener for them all (a server or a batch runs many at
 * once), before the spools' own, which close their files.
 */
const runsAtExit = new Set<() => void>();
let exitHooked = false;

function atExit(finish: () => void): void {
  runsAtExit.add(finish);
  if (exitHooked) return;
  exitHooked = true;
  process.prependListener("exit", () => {
    for (const each of runsAtExit) each();
  });
}

/** The error a run stopped by `signal` ends with: its reason when it says so, else an interruption by the user. */
function interruptionOf(signal: AbortSignal, cause: unknown): InterruptedError {
  return signal.reason instanceof InterruptedError ? signal.reason : new InterruptedError("interrupted", "interrupted by the user", { cause });
}
