/** How a bridged call ended. `budget_exceeded` calls never ran and do not count in `tool_calls`. */
export type BridgedCallStatus = "ok" | "error" | "unknown_tool" | "denied" | "replayed" | "budget_exceeded";

/** One call a program made over the bridge. */
export interface BridgedCallRecord {
  tool: string;
  /** The first 16 hex digits of the SHA-256 of the arguments (canonical JSON, artifacts resolved): what was sent, without the data. */
  arguments_digest: string;
  status: BridgedCallStatus;
  duration_ms: number;
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
  tool_calls: number;
  calls: BridgedCallRecord[];
  /** Why it failed (the tail of its traceback), else null. */
  error: string | null;
  duration_ms: number;
  code: string;
}

/** What a code-action run did, as `lllm run --json` prints it under `code_action`. */
export interface CodeActionReport {
  /** Calls that ran, over all programs. */
  tool_calls: number;
  /** Model turns: programs written, and a final CANNOT_FINISH_WITHIN_CALL_CAP reply. */
  attempts: number;
  programs: ProgramRecord[];
  /** Why the last program failed, when the run failed; else null. */
  error: string | null;
  duration_ms: number;
}
