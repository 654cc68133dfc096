import type { Model } from "../providers/index.js";
import type { AgentConfig } from "../config/index.js";
import { ConfigError, isLllmError } from "../errors.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import type { ApprovalPolicy } from "../approval/index.js";
import { runRecorded } from "../run/runRecorded.js";
import type { BatchItem, BatchResult } from "./BatchItem.js";
import { UsageCounter } from "../tactics/UsageCounter.js";

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
}

/**
 * Run one item as `lllm run` would: its own agents, dialog, tools and sandbox, and its own record in the run
 * store (with the batch id). A failure is the item's result, never an exception; only a cancel (second Ctrl-C)
 * rejects, with an `InterruptedError`.
 */
export async function runBatchItem(item: BatchItem, options: RunBatchItemOptions): Promise<BatchResult> {
  const started = performance.now();
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
  });
  if (run.ok) return line({ status: "ok", output: run.result.output, error: null }, run);
  // A cancelled item is not reported at all, so that a rerun runs it again.
  if (options.signal.aborted) throw run.error;
  const { error } = run;
  const code = isLllmError(error) ? error.code : "internal_error";
  const message = error instanceof Error ? error.message : String(error);
  return line({ status: "error", output: null, error: { code, message: error instanceof ConfigError && error.hint ? `${message} (${error.hint})` : message } }, run);
}
