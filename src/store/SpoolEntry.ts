import type { ModelCallRecord, RunStatus, ServedRunInfo, ToolCallStoredRecord } from "./RunRecord.js";
import type { TokenTotals } from "./RunTally.js";

/** What is known when a run starts. */
export interface RunStart {
  id: string;
  startedAt: number;
  tacticPath: string;
  tacticName: string | null;
  configDigest: string;
  input: string;
  vars: Record<string, string>;
  models: string[];
  lllmVersion: string;
  parentRun?: string;
  continuesRun?: string;
  batchId?: string;
  /** The working folder of the run's process. */
  cwd?: string;
  /** The test case this run is (`lllm test`): the test file and the case's name. */
  test?: { file: string; case: string };
  /** How `lllm serve` was asked for this run. */
  served?: ServedRunInfo;
}

/** A response of `lllm serve`'s Responses API, kept for `previous_response_id` and `GET /v1/responses/{id}`. */
export interface ServedResponse {
  id: string;
  /** The run that answered it. */
  run: string | null;
  createdAt: number;
  /** The wire object (JSON) as it was sent. */
  body: string;
  /** The dialog after it (JSON `Message[]`), what a request naming it as `previous_response_id` continues. */
  history: string | null;
}

/** A task of `lllm serve`'s A2A endpoint, as last saved (`tasks/get`). */
export interface ServedA2aTask {
  id: string;
  contextId: string;
  /** The run that carries it, once known. */
  run: string | null;
  updatedAt: number;
  /** The task (JSON, A2A 1.0's ProtoJSON), its texts already redacted. */
  body: string;
}

/** How a run ended. */
export interface RunEnd extends TokenTotals {
  endedAt: number;
  status: Exclude<RunStatus, "running" | "crashed">;
  exitCode: number;
  errorCode: string | null;
  errorMessage: string | null;
  /** The answer as stored: text as is, anything else as JSON. */
  output: string | null;
  /** Programs, bridged calls and artifacts (JSON), when the run had any. */
  details: string | null;
  models: string[];
  llmCalls: number;
  cost: number | null;
  durationMs: number;
}

/**
 * Model and tool calls to write. A model call's `messages` are only those new since the same agent's previous call;
 * `messagesKept` says how many of that call's messages come first (a dialog only grows, so each message is stored
 * once: a 100-round run would otherwise store 100 copies of its start).
 */
export interface RunCalls {
  model: Array<{ record: ModelCallRecord; messagesKept: number }>;
  tool: ToolCallStoredRecord[];
}

/** The first line of a spool file: who writes it (a run's `pid` and `host` come from here). */
export interface SpoolHeader {
  spool: number;
  pid: number;
  host: string;
}

/** One line of a spool file after its header. Texts in it are already redacted. */
export type SpoolEntry =
  | { begin: RunStart }
  | { calls: RunCalls & { run: string } }
  | { finish: { run: string; end: RunEnd; calls?: RunCalls } }
  /** The test case these runs are (`lllm test`) passed or failed: known once its assertions are checked, after the runs' ends. */
  | { test: { runs: string[]; status: "passed" | "failed" } }
  /** A response of `lllm serve`'s Responses API, kept (its texts already redacted). */
  | { response: ServedResponse }
  /** `DELETE /v1/responses/{id}`. */
  | { responseDeleted: { id: string } }
  /** An A2A task of `lllm serve`, saved (its texts already redacted). */
  | { a2aTask: ServedA2aTask }
  /** The writer closed the file (its process ended, or the file grew past its size): nothing more comes. */
  | { close: true };
