import type { ProviderCarry } from "../providers/Model.js";

/** How a run ended. `running` is stored while it runs; a `running` run whose process is gone reads as `crashed`. */
export type RunStatus = "running" | "ok" | "error" | "interrupted" | "budget" | "crashed";

export const RUN_STATUSES: readonly RunStatus[] = ["running", "ok", "error", "interrupted", "budget", "crashed"];

/** Token counts, as the providers reported them (cached prompt and reasoning tokens are parts of the totals). */
export interface StoredUsage {
  prompt_tokens: number;
  cached_prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
}

/** One run, as `lllm logs` lists it. Times are milliseconds since the epoch. */
export interface RunSummary extends StoredUsage {
  id: string;
  started_at: number;
  ended_at: number | null;
  status: RunStatus;
  exit_code: number | null;
  error_code: string | null;
  error_message: string | null;
  tactic_path: string | null;
  tactic_name: string | null;
  config_digest: string | null;
  input: string | null;
  vars: Record<string, string>;
  /** The answer: text, or the JSON value of a tactic with an `output` schema. */
  output: unknown;
  models: string[];
  llm_calls: number;
  /** Dollars; `null` when a model's price is unknown. */
  cost: number | null;
  duration_ms: number | null;
  lllm_version: string | null;
  parent_run: string | null;
  continues_run: string | null;
  batch_id: string | null;
  /** The test file and case this run is (`lllm test`). */
  test_file: string | null;
  test_case: string | null;
  /** Whether the test case passed (`passed`, `failed`); null until it is decided, and for other runs. */
  test_status: "passed" | "failed" | null;
  /** How the run was asked for, when `lllm serve` ran it. */
  served: ServedRunInfo | null;
  pid: number | null;
  cwd: string | null;
  /**
   * It stopped before its end (crashed, interrupted, failed or out of budget) and its journal lets `lllm run --resume`
   * go on from where it stopped.
   */
  resumable: boolean;
}

/**
 * How a served run was asked for (`lllm serve`): the route and the model (the tactic's id there), who asked (the
 * request's `user`, `metadata` and address), and the ids of its response and conversation on the wire.
 */
export interface ServedRunInfo {
  route: string;
  model: string;
  client?: { user?: string; metadata?: Record<string, string>; address?: string; user_agent?: string };
  response_id?: string;
  conversation_id?: string;
}

/** A message as sent to the model (the chat format of `ModelMessage`, stored as JSON). */
export interface StoredMessage {
  role: string;
  content: string | null;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  toolCallId?: string;
  name?: string;
  /** A user message's images, noted (`[image: image/png, 1234 bytes]`): the store keeps no image data. */
  media?: string[];
  /**
   * In a spool line only: the content is the result of the run's tool call of this `seq`, written before it (a tool
   * result is then written once, not again with the next model call); the merge puts the text back.
   */
  resultOf?: number;
}

export interface ModelCallRecord extends StoredUsage {
  seq: number;
  /** Order among all the run's model and tool calls (timestamps tie within a millisecond). */
  step: number;
  agent: string;
  round: number;
  model: string | null;
  started_at: number;
  latency_ms: number | null;
  /** Every message sent to the model in this call (the store keeps only those new since the agent's previous call). */
  messages: StoredMessage[];
  tools: string[];
  reply: string | null;
  tool_calls: Array<{ id: string; name: string; arguments: string }>;
  finish_reason: string | null;
  cost: number | null;
  /** The attempts that failed before this answer came, with their causes. */
  retries: Array<{ attempt: number; cause: string; wait_ms: number }>;
  /** Prompt tokens written to the provider's cache (part of `prompt_tokens`), when it reported them. */
  cache_write_prompt_tokens?: number;
  /** Answered through the provider's batch API (billed at the batch price). */
  batch?: boolean;
  /** What the provider wants back with the answer's tool calls (`ModelResponse.carry`): a resume gives it to the live model. */
  carry?: ProviderCarry;
}

export interface ToolCallStoredRecord {
  seq: number;
  /** Order among all the run's model and tool calls. */
  step: number;
  agent: string;
  call_id: string | null;
  name: string;
  arguments: Record<string, unknown>;
  /** The text the model read back. */
  result: string | null;
  /** `refused`: the tool needs approval, it was not given, and the call did not run. */
  status: "ok" | "error" | "repeated" | "refused";
  error: string | null;
  duration_ms: number | null;
  ended_at: number;
}

/** A whole run: the summary, every model call and every tool call, in order. */
export interface RunRecord extends RunSummary {
  /** What programs did (code-action report, tool chains) and the artifacts they stored, as `run --json` has them. */
  details: { code_action?: unknown; tool_chains?: unknown[]; artifacts?: unknown[]; spend?: unknown } | null;
  model_calls: ModelCallRecord[];
  tool_calls: ToolCallStoredRecord[];
  /** The attempts after the first (`lllm run --resume`), each with the first step it recorded. */
  attempts: RunAttempt[];
}

/** A later attempt of a run: when it began, and the first of its model calls, tool calls and steps. */
export interface RunAttempt {
  attempt: number;
  started_at: number;
  model_seq: number;
  tool_seq: number;
  step: number;
  /**
   * What the attempts before it took, together, as it counted them when it began (null in a record written before
   * this was kept: see `RunJournal`'s `earlierDuration`): the next attempt's figure is this one's plus its own time.
   */
  earlier_ms: number | null;
  /** The seq of the model call whose answer ended the run before this attempt, which it asked for again. */
  asked_again: number | null;
}
