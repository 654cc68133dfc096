/** How a bridged call ended. `budget_exceeded` calls never ran and do not count in `toolCalls`. */
export type BridgedCallStatus = "ok" | "error" | "unknown_tool" | "denied" | "replayed" | "budget_exceeded";

/** One call a program made over the bridge. */
export interface BridgedCallRecord {
  tool: string;
  /** The first 16 hex digits of the SHA-256 of the arguments (canonical JSON, artifacts resolved): what was sent, without the data. */
  argumentsDigest: string;
  status: BridgedCallStatus;
  durationMs: number;
  /** The error's code and message when the call failed. */
  error?: string;
}

/** How a program ended: `budget` when it reached max_tool_calls (its output is discarded even if it caught the error). */
export type ProgramStatus = "ok" | "error" | "timeout" | "budget" | "no_answer";

/** One program the model wrote, and what running it did. */
export interface ProgramRecord {
  /** 1 for the first program, 2 for the first repair, … */
  attempt: number;
  status: ProgramStatus;
  /** Calls that ran (failed, unknown, refused by approval, replayed included; budget-refused excluded). */
  toolCalls: number;
  calls: BridgedCallRecord[];
  /** Why it failed (the tail of its traceback), else null. */
  error: string | null;
  durationMs: number;
  code: string;
}

/** What a code-action run did; `lllm run --json` prints it under `code_action` (see codeActionReportJson). */
export interface CodeActionReport {
  /** Calls that ran, over all programs. */
  toolCalls: number;
  /** Model turns: programs written, and a final CANNOT_FINISH_WITHIN_CALL_CAP reply. */
  attempts: number;
  programs: ProgramRecord[];
  /** Why the last program failed, when the run failed; else null. */
  error: string | null;
  durationMs: number;
}

/** A bridged call as JSON writes it (`lllm run --json`, the run store). */
export function bridgedCallJson(call: BridgedCallRecord): Record<string, unknown> {
  return { tool: call.tool, arguments_digest: call.argumentsDigest, status: call.status, duration_ms: call.durationMs, ...(call.error !== undefined ? { error: call.error } : {}) };
}

/** A program's record as JSON writes it (`tool_chains` and `code_action.programs`). */
export function programRecordJson(program: ProgramRecord): Record<string, unknown> {
  return { attempt: program.attempt, status: program.status, tool_calls: program.toolCalls, calls: program.calls.map(bridgedCallJson), error: program.error, duration_ms: program.durationMs, code: program.code };
}

/** A code-action report as JSON writes it (`code_action` of `lllm run --json` and of the run store). */
export function codeActionReportJson(report: CodeActionReport): Record<string, unknown> {
  return { tool_calls: report.toolCalls, attempts: report.attempts, programs: report.programs.map(programRecordJson), error: report.error, duration_ms: report.durationMs };
}
