import { BudgetError, InterruptedError, LllmError, ModelBehaviorError, ProviderError, RunLimitError, ToolError, type RunLimitName } from "../../errors.js";
import type { ErrorCode } from "../../errorCodes.js";
import type { RecordedRun, RecordedUsage } from "../../run/runRecorded.js";
import type { TacticResult } from "../../tactics/TacticRun.js";
import { redactSecrets } from "../../util/redact.js";

/** A run's end as it crosses Redis: what the routes read of a `RecordedRun`, its error by kind (redacted). */
export type WireRecordedRun =
  | { ok: true; output: unknown; usage: RecordedUsage; cost: number | null; runId?: string }
  | { ok: false; error: WireError; usage: RecordedUsage; cost: number | null; runId?: string };

/** An error by the kind the routes tell apart (`runErrorToHttp`), with what they read of it. */
export interface WireError {
  kind: "limit" | "budget" | "interrupted" | "provider" | "model" | "tool" | "lllm" | "other";
  code?: string;
  message: string;
  hint?: string;
  limit?: { name: RunLimitName; value: number; spent: number };
  /** A provider's refusal of the request itself (its status and words): the route answers it as a 400, as without a queue. */
  upstream?: { status: number; message: string };
}

/** A worker's run's end, to send. */
export function toWire(run: RecordedRun): WireRecordedRun {
  const base = { usage: run.usage, cost: run.cost, ...(run.runId !== undefined ? { runId: run.runId } : {}) };
  if (run.ok) return { ok: true, output: run.result.output, ...base };
  return { ok: false, error: wireError(run.error), ...base };
}

function wireError(error: unknown): WireError {
  const message = redactSecrets(error instanceof Error ? error.message : String(error));
  if (!(error instanceof LllmError)) return { kind: "other", message };
  const common = { code: error.code, message, ...(error.hint !== undefined ? { hint: redactSecrets(error.hint) } : {}) };
  if (error instanceof RunLimitError) return { kind: "limit", ...common, limit: { name: error.limit, value: error.value, spent: error.spent } };
  if (error instanceof BudgetError) return { kind: "budget", ...common };
  if (error instanceof InterruptedError) return { kind: "interrupted", ...common };
  if (error instanceof ProviderError) return { kind: "provider", ...common, ...(error.upstream !== undefined ? { upstream: { status: error.upstream.status, message: redactSecrets(error.upstream.message) } } : {}) };
  if (error instanceof ModelBehaviorError) return { kind: "model", ...common };
  if (error instanceof ToolError) return { kind: "tool", ...common };
  return { kind: "lllm", ...common };
}

/** The run's end as the routes read it, on the server: the error an instance of its kind again. */
export function fromWire(wire: WireRecordedRun): RecordedRun {
  const base = { usage: wire.usage, cost: wire.cost, ...(wire.runId !== undefined ? { runId: wire.runId } : {}) };
  if (wire.ok) return { ok: true, result: { output: wire.output } as TacticResult, summary: "", ...base };
  return { ok: false, error: revive(wire.error), ...base };
}

function revive(error: WireError): Error {
  const code = (error.code ?? "internal_error") as ErrorCode;
  const options = error.hint !== undefined ? { hint: error.hint } : {};
  switch (error.kind) {
    case "limit":
      return new RunLimitError(code, error.message, { ...options, limit: error.limit!.name, value: error.limit!.value, spent: error.limit!.spent });
    case "budget":
      return new BudgetError(code, error.message, options);
    case "interrupted":
      return new InterruptedError(code, error.message, options);
    case "provider":
      return new ProviderError(code, error.message, { ...options, ...(error.upstream !== undefined ? { upstream: error.upstream } : {}) });
    case "model":
      return new ModelBehaviorError(code, error.message, options);
    case "tool":
      return new ToolError(code, error.message, options);
    case "lllm":
      return new LllmError(code, error.message, options);
    default:
      return new Error(error.message);
  }
}

/** A run that ended without running (cancelled before a worker took it, lost with its worker). */
export function endedWithout(error: Error): RecordedRun {
  return { ok: false, error, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, llmCalls: 0, cachedPromptTokens: 0, reasoningTokens: 0 }, cost: null };
}
