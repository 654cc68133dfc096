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
  /** What a resume of this run needs besides its input (see `ResumeInfo`). */
  resume?: ResumeInfo;
  /** The batch item this run is: its key (see `batchItemKey`), so that a batch run again resumes it. */
  batchItem?: string;
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

/**
 * What `lllm run --resume` needs of a run besides its input and vars: the flags that shaped it, and the digests of
 * its setup (by part: the tactic, each agent's system prompt, each tool as offered) to tell a changed tactic.
 */
export interface ResumeInfo {
  flags: ResumeFlags;
  setup: Record<string, string>;
}

/** The flags of `lllm run` that change what a run does, kept so that its resume runs the same way. */
export interface ResumeFlags {
  model?: string;
  packages?: string[];
  maxSteps?: number;
  modelTimeout?: number;
  limits?: { maxCost?: number; maxTokens?: number; maxToolCalls?: number; maxDuration?: number };
  notebookOut?: string;
}

/** Why a tool call without a recorded outcome may run again: the tool says so, or its work is journaled itself. */
export type RerunSafety = "idempotent" | "replays";

/** A tool call starting, written before it runs (`tool_journal`): a resume that finds no outcome knows it was cut short. */
export interface ToolStart {
  run: string;
  key: string;
  agent: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Whether it may run again when its outcome is missing; absent: not safe. */
  rerun?: RerunSafety;
  at: number;
}

/** A later attempt of a run began (`lllm run --resume`): the run is running again, its calls numbered from `from`. */
export interface ResumeStart {
  run: string;
  attempt: number;
  startedAt: number;
  from: { modelSeq: number; toolSeq: number; step: number };
  /** What the attempts before it took, together (see `RunAttempt.earlier_ms`). */
  earlierMs?: number;
  /** The model call whose answer it asks for again (see `RunAttempt.asked_again`). */
  askedAgain?: number;
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
  /** A tool call starts (the journal; written at once, before it runs). */
  | { start: ToolStart }
  /**
   * A tool call's outcome (the journal; written at once, before the run goes on), as `ToolJournal` keeps it, and the
   * call's row. `resultInRow`: the outcome's `resultStr` is the row's `result`, left out of `outcome` (the merge puts
   * it back), and `resultIsBody`: so is its string `result`, the body of that text (`formattedBody`). A result text is
   * then written once.
   */
  | { outcome: { run: string; key: string; outcome: string; at: number; row?: ToolCallStoredRecord; resultInRow?: true; resultIsBody?: true } }
  /** A later attempt of the run begins (`lllm run --resume`, a batch item run again). */
  | { resume: ResumeStart }
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
