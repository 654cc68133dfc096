import type { ModelCallRecord, RunStatus, RunSummary, ToolCallStoredRecord } from "./RunRecord.js";
import { replaysToSameEnd } from "./journal/endingAnswer.js";

/**
 * Rows of the store as lllm reads them. Text columns are selected as blobs and decoded here: libsql aborts the whole
 * process (a Rust panic, exit 134) on a text value that is not UTF-8, which a damaged page can leave, whereas a
 * blob always comes back, and its bytes are checked here (`DamagedText`).
 */

export type Row = Record<string, unknown>;

/** The columns of each table as lllm reads them, text ones as blobs (see above). */
export const RUN_COLUMNS = columns(
  ["id", "status", "error_code", "error_message", "tactic_path", "tactic_name", "config_digest", "input", "vars", "output", "details", "models", "lllm_version", "parent_run", "continues_run", "batch_id", "host", "cwd", "test_file", "test_case", "test_status", "served"],
  ["started_at", "ended_at", "exit_code", "prompt_tokens", "cached_prompt_tokens", "completion_tokens", "reasoning_tokens", "llm_calls", "cost", "duration_ms", "pid", "(resume IS NOT NULL AND batch_item IS NULL) AS journaled", "EXISTS (SELECT 1 FROM run_attempts WHERE run_attempts.run_id = runs.id) AS resumed_before"],
);
export const MODEL_CALL_COLUMNS = columns(
  ["agent", "model", "messages", "tools", "reply", "tool_calls", "finish_reason", "retries", "carry"],
  ["seq", "step", "round", "started_at", "latency_ms", "messages_kept", "prompt_tokens", "cached_prompt_tokens", "completion_tokens", "reasoning_tokens", "cost", "cache_write_prompt_tokens", "batch"],
);
export const TOOL_CALL_COLUMNS = columns(["agent", "call_id", "name", "arguments", "result", "status", "error"], ["seq", "step", "duration_ms", "ended_at"]);

function columns(texts: string[], others: string[]): string {
  return [...texts.map((name) => `CAST(${name} AS BLOB) AS ${name}`), ...others].join(", ");
}

/** A row with its blobs (the text columns) decoded, in place: a row is libsql's plain object, made for this read. */
export function decodeRow(row: unknown): Row {
  const decoded = row as Row;
  for (const key in decoded) decoded[key] = blobText(decoded[key]);
  return decoded;
}

/** The first value of a `raw()` row, a blob decoded (libsql's `pluck()` does not pluck). */
export function scalar(row: unknown): unknown {
  return Array.isArray(row) ? blobText(row[0]) : undefined;
}

/** A blob as UTF-8 text; any other value as it is. Bytes that are not UTF-8 are damage (`DamagedText`). */
export function blobText(value: unknown): unknown {
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
    try {
      return utf8.decode(value as ArrayBuffer);
    } catch {
      throw new DamagedText();
    }
  }
  return value;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A stored text that is not UTF-8. lllm writes only UTF-8 (SQLite's integrity check does not look inside values,
 * so a page overwritten with other bytes passes it): such a value means the file is damaged, and is reported as
 * SQLite reports damage (its code starts with `SQLITE_CORRUPT`).
 */
export class DamagedText extends Error {
  readonly code = "SQLITE_CORRUPT_TEXT";

  constructor() {
    super("a stored text is not UTF-8 (a damaged page)");
  }
}

function json<T>(value: unknown, fallback: T): T {
  if (typeof value !== "string") return fallback;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
}

function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

export function integer(value: unknown): number | null {
  return typeof value === "number" || typeof value === "bigint" ? Number(value) : null;
}

export function toSummary(row: Row): RunSummary {
  return {
    id: String(row.id),
    started_at: integer(row.started_at) ?? 0,
    ended_at: integer(row.ended_at),
    status: String(row.status) as RunStatus,
    exit_code: integer(row.exit_code),
    error_code: text(row.error_code),
    error_message: text(row.error_message),
    tactic_path: text(row.tactic_path),
    tactic_name: text(row.tactic_name),
    config_digest: text(row.config_digest),
    input: text(row.input),
    vars: json(row.vars, {}),
    output: decodeOutput(row.output),
    models: json(row.models, []),
    prompt_tokens: integer(row.prompt_tokens) ?? 0,
    cached_prompt_tokens: integer(row.cached_prompt_tokens) ?? 0,
    completion_tokens: integer(row.completion_tokens) ?? 0,
    reasoning_tokens: integer(row.reasoning_tokens) ?? 0,
    llm_calls: integer(row.llm_calls) ?? 0,
    cost: typeof row.cost === "number" ? row.cost : null,
    duration_ms: integer(row.duration_ms),
    lllm_version: text(row.lllm_version),
    parent_run: text(row.parent_run),
    continues_run: text(row.continues_run),
    batch_id: text(row.batch_id),
    test_file: text(row.test_file),
    test_case: text(row.test_case),
    test_status: row.test_status === "passed" || row.test_status === "failed" ? row.test_status : null,
    served: json(row.served, null),
    pid: integer(row.pid),
    cwd: text(row.cwd),
    resumable: isResumable({
      status: String(row.status) as RunStatus,
      journaled: integer(row.journaled) === 1,
      exitCode: integer(row.exit_code),
      errorCode: text(row.error_code),
      llmCalls: integer(row.llm_calls) ?? 0,
      testFile: text(row.test_file),
      parentRun: text(row.parent_run),
      resumedBefore: integer(row.resumed_before) === 1,
    }),
  };
}

/** The statuses of a run that stopped before its end: the ones `lllm run --resume` goes on with. */
export const RESUMABLE_STATUSES: readonly RunStatus[] = ["crashed", "interrupted", "error", "budget"];

/**
 * Whether `lllm run --resume` can go on with a run, as `lllm run` advises when the run stops (the same rule, so that
 * `lllm logs` marks what the run itself said): it stopped before its end, but not on a mistake in the user's files or
 * flags (exit 2), which a resume would meet again (a resume that stopped so, a key not set in that shell or a script
 * path from another folder, leaves the run as resumable as it was); not on an error a resume would only replay into
 * again (`replaysToSameEnd`: programs that failed every repair); not on a failure before its first model call, when
 * nothing is done that a resume could go on from. And it was recorded with its journal (by an lllm that keeps one, as
 * a run of its own: a test case, a nested run or a batch item is resumed with what started it).
 */
export function isResumable(run: { status: RunStatus; journaled: boolean; exitCode: number | null; errorCode: string | null; llmCalls: number; testFile: string | null; parentRun: string | null; resumedBefore: boolean }): boolean {
  if (!run.journaled || !RESUMABLE_STATUSES.includes(run.status) || run.testFile !== null || run.parentRun !== null) return false;
  if (run.status === "crashed" || run.status === "interrupted") return true;
  if (replaysToSameEnd(run.errorCode)) return false;
  // A resumed run that stopped on exit 2 stopped on the attempt's mistake, and had something done before.
  return run.resumedBefore || (run.exitCode !== 2 && run.llmCalls > 0);
}

/** The stored form of an answer (see `decodeOutput`). */
export function encodeOutput(output: unknown): string | null {
  if (output === undefined) return null;
  return JSON.stringify(typeof output === "string" ? { text: output } : { json: output });
}

/** Output is stored as `{"text": …}` or `{"json": …}` so that a text answer that looks like JSON stays text. */
export function decodeOutput(value: unknown): unknown {
  const stored = json<{ text?: string; json?: unknown } | null>(value, null);
  if (stored === null) return null;
  return "text" in stored ? stored.text : stored.json;
}

export function toModelCall(row: Row): ModelCallRecord {
  return {
    seq: integer(row.seq) ?? 0,
    step: integer(row.step) ?? 0,
    agent: String(row.agent),
    round: integer(row.round) ?? 0,
    model: text(row.model),
    started_at: integer(row.started_at) ?? 0,
    latency_ms: integer(row.latency_ms),
    messages: json(row.messages, []),
    tools: json(row.tools, []),
    reply: text(row.reply),
    tool_calls: json(row.tool_calls, []),
    finish_reason: text(row.finish_reason),
    prompt_tokens: integer(row.prompt_tokens) ?? 0,
    cached_prompt_tokens: integer(row.cached_prompt_tokens) ?? 0,
    completion_tokens: integer(row.completion_tokens) ?? 0,
    reasoning_tokens: integer(row.reasoning_tokens) ?? 0,
    cost: typeof row.cost === "number" ? row.cost : null,
    retries: json(row.retries, []),
    ...(integer(row.cache_write_prompt_tokens) ? { cache_write_prompt_tokens: integer(row.cache_write_prompt_tokens)! } : {}),
    ...(integer(row.batch) === 1 ? { batch: true } : {}),
    ...(typeof row.carry === "string" ? { carry: json(row.carry, {}) } : {}),
  };
}

export function toToolCall(row: Row): ToolCallStoredRecord {
  return {
    seq: integer(row.seq) ?? 0,
    step: integer(row.step) ?? 0,
    agent: String(row.agent),
    call_id: text(row.call_id),
    name: String(row.name),
    arguments: json(row.arguments, {}),
    result: text(row.result),
    status: String(row.status) as ToolCallStoredRecord["status"],
    error: text(row.error),
    duration_ms: integer(row.duration_ms),
    ended_at: integer(row.ended_at) ?? 0,
  };
}
