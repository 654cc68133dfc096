import type { Model } from "../providers/index.js";
import type { AgentConfig } from "../config/index.js";
import { ConfigError, isLllmError } from "../errors.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import type { ApprovalPolicy } from "../approval/index.js";
import { runRecorded } from "../run/runRecorded.js";
import type { BatchItem, BatchResult } from "./BatchItem.js";
import { UsageCounter } from "../tactics/UsageCounter.js";
import type { FunctionTool } from "../tools/index.js";
import type { ParkedRun } from "./ParkedItems.js";
import type { ItemResume } from "./ItemResumes.js";

export interface RunBatchItemOptions {
  prepared: PreparedTactic;
  batchId: string;
  createModel: (config: AgentConfig) => Model;
  /** Vars given on the command line (`--var`), under each item's own. */
  vars: Record<string, string>;
  maxSteps?: number;
  approve: ApprovalPolicy;
  /** Cancels the item (a second Ctrl-C): it is then not reported at all, so that a rerun runs it again. */
  signal: AbortSignal;
  /** `--no-log`. */
  log?: boolean;
  warn: (message: string) => void;
  /** Wraps the agents' tools (`RunOptions.wrapTool`). */
  wrapTool?: (tool: FunctionTool, agent: string) => FunctionTool;
  /**
   * For an item whose attempts may park (`lllm batch --provider-batch`): whether this attempt parked, the record
   * of its first attempt, and when that one started.
   */
  attempt?: { parked: () => boolean; recordId?: string; startedAt?: number };
  /** The item's key in the run store (`batchItemKey`: its --out file and id), so that a batch run again finds its run. */
  batchItem?: string;
  /** The item's run stopped mid-way in an earlier run of the batch: it resumes from there (or is refused). */
  resume?: ItemResume;
}

/**
 * Run one item as `lllm run` would: its own agents, dialog, tools and sandbox, and its own record in the run
 * store (with the batch id). A failure is the item's result, never an exception; only a cancel (second Ctrl-C)
 * rejects, with an `InterruptedError`.
 */
export async function runBatchItem(item: BatchItem, options: RunBatchItemOptions): Promise<BatchResult | ParkedRun> {
  const started = options.attempt?.startedAt ?? performance.now();
  const usage = new UsageCounter();
  const line = (outcome: Pick<BatchResult, "status" | "output" | "error">, recorded: { cost: number | null; runId?: string } = { cost: null }): BatchResult => ({
    id: item.id,
    ...outcome,
    usage: usage.toReport(),
    cost: recorded.cost,
    runId: recorded.runId ?? null,
    durationMs: Math.round(performance.now() - started),
  });
  if (item.problem) return line({ status: "error", output: null, error: { code: item.problem.code, message: item.problem.message } });
  // Its stopped run is left as it is: the same batch run again with --rerun-unknown resumes it.
  if (options.resume && "refused" in options.resume) return line({ status: "error", output: null, error: { code: options.resume.refused.code, message: `${options.resume.refused.message} (${options.resume.refused.hint ?? ""})` } });
  const resume = options.resume && "journal" in options.resume ? options.resume : undefined;
  const run = await runRecorded(options.prepared, {
    input: item.input,
    vars: { ...options.vars, ...item.vars },
    ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
    signal: options.signal,
    createModel: options.createModel,
    approve: options.approve,
    batchId: options.batchId,
    ...(options.log !== undefined ? { log: options.log } : {}),
    warn: options.warn,
    missingVariableHint: () => `Give it in the item's vars (a CSV column, "vars" in JSONL) or with --var.`,
    usage,
    ...(options.wrapTool ? { wrapTool: options.wrapTool } : {}),
    ...(options.attempt ? { parked: options.attempt.parked } : {}),
    ...(options.attempt?.recordId !== undefined ? { recordId: options.attempt.recordId } : {}),
    ...(options.batchItem !== undefined ? { batchItem: options.batchItem } : {}),
    ...(resume ? { resume: resume.journal, rerunUnknown: resume.rerunUnknown } : {}),
  });
  if (!run.ok && options.attempt?.parked()) return { parked: true, ...(run.runId !== undefined ? { recordId: run.runId } : {}) };
  if (run.ok) return line({ status: "ok", output: run.result.output, error: null }, run);
  // A cancelled item is not reported at all, so that a rerun runs it again.
  if (options.signal.aborted) throw run.error;
  const { error } = run;
  const code = isLllmError(error) ? error.code : "internal_error";
  const message = error instanceof Error ? error.message : String(error);
  return line({ status: "error", output: null, error: { code, message: error instanceof ConfigError && error.hint ? `${message} (${error.hint})` : message } }, run);
}
