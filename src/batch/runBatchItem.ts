import type { Model } from "../providers/index.js";
import type { AgentConfig } from "../config/index.js";
import { ConfigError, InterruptedError, isLllmError } from "../errors.js";
import { startRunLog } from "../store/startRunLog.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import { runTactic } from "../tactics/runTactic.js";
import type { ApprovalPolicy } from "../codeaction/approval.js";
import { missingTemplateVariables } from "../tactics/templateVariables.js";
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
  const failed = (code: string, message: string, extra: Partial<BatchResult> = {}): BatchResult => ({ id: item.id, status: "error", output: null, error: { code, message }, usage: usage.toReport(), cost: null, run_id: null, duration_ms: Math.round(performance.now() - started), ...extra });
  if (item.problem) return failed(item.problem.code, item.problem.message);
  const vars = { ...options.vars, ...item.vars };
  const missing = missingTemplateVariables(options.prepared, vars);
  if (missing.length > 0) {
    // As in `lllm run`: before any model call, so that no item stops halfway, after paid calls, for a missing var.
    const names = [...new Set(missing.map((entry) => entry.name))];
    return failed("template_missing_variable", `${names.map((name) => `{${name}}`).join(", ")} ha${names.length === 1 ? "s" : "ve"} no value: give it in the item's vars (a CSV column, "vars" in JSONL) or with --var`);
  }
  const runLog = await startRunLog({ prepared: options.prepared, input: typeof item.input === "string" ? item.input : JSON.stringify(item.input), vars, batchId: options.batchId, ...(options.log !== undefined ? { log: options.log } : {}), warn: options.warn });
  const runId = runLog.recorder?.id ?? null;
  try {
    const result = await runTactic(options.prepared, {
      input: item.input,
      vars,
      ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
      signal: options.signal,
      createModel: options.createModel,
      approve: options.approve,
      onEvent: (event) => {
        if (event.type === "model_reply") usage.add(event.usage);
        runLog.onEvent(event);
      },
    });
    await runLog.finish({ output: result.output });
    return { id: item.id, status: "ok", output: result.output, error: null, usage: usage.toReport(), cost: runLog.tally.cost, run_id: runId, duration_ms: Math.round(performance.now() - started) };
  } catch (error) {
    if (options.signal.aborted) {
      const interrupted = options.signal.reason instanceof InterruptedError ? options.signal.reason : new InterruptedError("interrupted", "interrupted by the user", { cause: error });
      await runLog.finish({ error: interrupted });
      throw interrupted;
    }
    await runLog.finish({ error });
    const code = isLllmError(error) ? error.code : "internal_error";
    const message = error instanceof Error ? error.message : String(error);
    return failed(code, error instanceof ConfigError && error.hint ? `${message} (${error.hint})` : message, { cost: runLog.tally.cost, run_id: runId });
  }
}
