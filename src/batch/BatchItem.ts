import type { ErrorCode } from "../errors.js";
import type { RunUsage } from "../tactics/TacticRun.js";
import { runUsageJson } from "../tactics/tacticResultJson.js";

/** One input of a batch, as read from the dataset. */
export interface BatchItem {
  /** The item's `id`, else its line number (CSV: the row's line number), as text. */
  id: string;
  /** Position in the dataset, from 0: `--ordered` writes results in this order. */
  index: number;
  /** The input: text, or a value for a tactic whose `input` schema is an object. */
  input: unknown;
  vars: Record<string, string>;
  /** Set when the line could not be read as an item: it is reported as failed, never run. */
  problem?: { code: ErrorCode; message: string };
}

/** The result of one item; written as one line of the output (NDJSON, see batchResultJson) when the item finishes. */
export interface BatchResult {
  id: string;
  status: "ok" | "error";
  output: unknown;
  error: { code: ErrorCode; message: string } | null;
  usage: RunUsage;
  /** US dollars; null when a model's price is unknown or nothing ran. */
  cost: number | null;
  /** The item's run in the run store, when it was recorded. */
  runId: string | null;
  durationMs: number;
}

/** Tokens and dollars of results already in --out (earlier runs): the budgets count them. */
export interface BatchSpending {
  promptTokens: number;
  completionTokens: number;
  cost: number;
}

/** An item that failed without running (a bad line, a duplicate id, a worker that gave up): nothing spent. */
export function failedBatchResult(id: string, error: { code: ErrorCode; message: string }): BatchResult {
  return { id, status: "error", output: null, error, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, llmCalls: 0 }, cost: null, runId: null, durationMs: 0 };
}

/** One line of the output as JSON writes it: `{id, status, output, error, usage, cost, run_id, duration_ms}`. */
export function batchResultJson(result: BatchResult): Record<string, unknown> {
  return { id: result.id, status: result.status, output: result.output, error: result.error, usage: runUsageJson(result.usage), cost: result.cost, run_id: result.runId, duration_ms: result.durationMs };
}
