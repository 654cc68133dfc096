import { closeSync, constants, fstatSync, openSync, readSync, unlinkSync } from "node:fs";
import { distrustOpenFile } from "../config/distrust.js";
import path from "node:path";
import type Libsql from "libsql";
import type { Database } from "./openDatabase.js";
import { processAlive } from "../util/processAlive.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";
import { host, SPOOL_VERSION } from "./RunSpool.js";
import { formattedBody } from "../tools/formatResult.js";
import type { StoredMessage } from "./RunRecord.js";
import type { RunCalls, RunEnd, RunStart, SpoolEntry, SpoolHeader } from "./SpoolEntry.js";
import { spoolFiles } from "./storeFiles.js";
import { forgetDroppedSaid, readDroppedSaid, saveDroppedSaid, type DroppedSaid } from "./droppedSaid.js";
import { blobText, decodeOutput } from "./storedRows.js";

/** A spool file is read and merged this much at a time, one transaction each: memory and the WAL stay small. */
const CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Move the runs recorded in the spool (`logs.spool/*.jsonl`, see `RunSpool`) into the database. Each file is merged
 * from where the last merge stopped (`spool_progress` holds the offset, updated in the same transaction as the rows,
 * so a line is never merged twice), complete lines only: a writer may be appending the next line right now. A file
 * is deleted once merged to its end and its writer is done with it (a `close` line, or its process is gone from this
 * host). A file of a spool version this lllm does not know is left for the lllm that wrote it. With `keepFiles`
 * (a copy in memory, for a reader who cannot write the log) no file is deleted, and a dropped line is said by the
 * first reader only (see `droppedSaid`). A file that is not this user's (see `mergeFile`) is left out: returned,
 * each with why, for the reader to say.
 */
export function mergeSpool(database: Database, folder: string, options: { keepFiles?: boolean } = {}): SpoolMerge {
  const names = spoolFiles(folder);
  const merge: SpoolMerge = { skipped: [], dropped: [] };
  if (names.length === 0) return merge;
  const statements = statementsOf(database);
  // Kept files are merged again by every reader: what an earlier one said of them is not said again.
  const said = options.keepFiles === true ? readDroppedSaid(folder) : undefined;
  for (const name of names) {
    const why = mergeFile(database, statements, path.join(folder, name), name, { keepFiles: options.keepFiles === true, dropped: merge.dropped, said });
    if (why !== undefined) merge.skipped.push(`${name} (${why})`);
  }
  if (said !== undefined && merge.dropped.length > 0) merge.saidAgain = saveDroppedSaid(folder, said, names);
  // A home that may be written again: what readers of its kept files remembered is of no more use.
  if (said === undefined) forgetDroppedSaid(folder);
  return merge;
}

/** What a merge left out: files that are not this user's (each with why), and lines it could not use (each named). */
export interface SpoolMerge {
  skipped: string[];
  /**
   * Lines of a damaged or hand-edited file whose values have the wrong types or shape (`true` where a text belongs,
   * a part missing): dropped, each said once, so that the lines after them are merged and no bad value reaches SQLite
   * (libsql aborts the whole process on a boolean).
   */
  dropped: string[];
  /** Why the next reader will say these dropped lines again (kept files, and nowhere to remember them); else undefined. */
  saidAgain?: string;
}

interface Progress {
  offset: number;
  header: SpoolHeader | undefined;
  closed: boolean;
}

/** Merge one file; why it was left out when it is not this user's to merge. */
function mergeFile(database: Database, statements: Statements, file: string, name: string, options: { keepFiles: boolean; dropped: string[]; said: DroppedSaid | undefined }): string | undefined {
  const { keepFiles } = options;
  let fd: number;
  try {
    // Not through a link, and without waiting on a FIFO (its open would block until something writes to it).
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined; // Merged and deleted by another reader meanwhile (or a link, which no writer makes).
  }
  let progress: Progress;
  try {
    const stat = fstatSync(fd);
    // Only this user's own runs: a file another user put in a spool folder made writable to others by hand would
    // add runs of theirs (a conversation `--continue` sends to the model). Left as it is, not merged, not deleted.
    if (!stat.isFile()) return "not a file";
    const distrust = distrustOpenFile(stat, file);
    if (distrust !== undefined) return distrust;
    const size = stat.size;
    // Outside a transaction first: a file merged to its end (a live writer's, between two lines) costs no lock.
    progress = readProgress(statements, name);
    const saidUpTo = options.said?.get(name) ?? 0;
    while (progress.offset < size && !(progress.header && progress.header.spool > SPOOL_VERSION)) {
      const dropped: string[] = [];
      const step = database.transaction(() => mergeChunk(statements, fd, name, size, { dropped, saidUpTo })).immediate();
      // Said once the chunk is in: a chunk rolled back (a busy database) is merged again, and would say them again.
      options.dropped.push(...dropped);
      progress = step.progress;
      if (dropped.length > 0) options.said?.set(name, progress.offset);
      if (step.done) break;
    }
  } finally {
    closeSync(fd);
  }
  if (!progress.header || progress.header.spool > SPOOL_VERSION) return;
  const { pid, host: writerHost } = progress.header;
  const writerGone = progress.closed || (writerHost === host() && pid !== process.pid && !processAlive(pid));
  if (!writerGone || keepFiles) return;
  // A writer killed in the middle of a line left a tail without its newline: nothing more will complete it.
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return; // Kept (and its progress with it) until it can go.
  }
  statements.forget.run(name);
  return undefined;
}

/** Merge the next chunk of complete lines of one file; `done` when none is left (or the file is not ours to merge). */
function mergeChunk(statements: Statements, fd: number, name: string, size: number, drops: { dropped: string[]; saidUpTo: number }): { done: boolean; progress: Progress } {
  const { dropped, saidUpTo } = drops;
  // Read again inside the transaction: another reader may have merged this file meanwhile.
  const progress = readProgress(statements, name);
  if (progress.header && progress.header.spool > SPOOL_VERSION) return { done: true, progress };
  const lines = readLines(fd, progress.offset, size);
  if (lines.consumed === 0) return { done: true, progress };
  let droppedHere = 0;
  let offset = progress.offset;
  for (const line of lines.texts) {
    const start = offset;
    offset += Buffer.byteLength(line) + 1;
    if (!progress.header) {
      progress.header = parseHeader(line);
      // Not a spool we know: leave the whole file (and its offset) for the lllm that wrote it.
      if (progress.header.spool > SPOOL_VERSION) break;
      continue;
    }
    const entry = parseEntry(line);
    if (entry === undefined) continue; // A line garbled on disk: the rest of the file still counts.
    if ("close" in entry) {
      progress.closed = true;
      continue;
    }
    const why = applyLine(statements, entry, progress.header);
    // A line before `saidUpTo` was said by an earlier reader of this kept file: dropped again, quietly.
    if (why === undefined || start < saidUpTo) continue;
    // Named for the first few (finding a line's number reads the file up to it); the rest are counted.
    droppedHere += 1;
    if (droppedHere <= MAX_NAMED_DROPS) dropped.push(`${name}, line ${lineNumberAt(fd, start)} (a \`${kindOf(entry)}\` line): ${escapeControlCharacters(why, { all: true })}`);
  }
  if (droppedHere > MAX_NAMED_DROPS) dropped.push(`${name}: ${droppedHere - MAX_NAMED_DROPS} more lines like these`);
  if (progress.header && progress.header.spool > SPOOL_VERSION) {
    statements.saveProgress.run(name, 0, JSON.stringify(progress.header), 0);
    return { done: true, progress: { ...progress, offset: 0 } };
  }
  progress.offset += lines.consumed;
  statements.saveProgress.run(name, progress.offset, progress.header ? JSON.stringify(progress.header) : null, progress.closed ? 1 : 0);
  return { done: progress.offset >= size, progress };
}

function readProgress(statements: Statements, name: string): Progress {
  const row = statements.progress.row(name) as [number, unknown, number] | undefined;
  const header = blobText(row?.[1]);
  return { offset: row ? Number(row[0]) : 0, header: typeof header === "string" ? (JSON.parse(header) as SpoolHeader) : undefined, closed: row ? Number(row[2]) === 1 : false };
}

/** The complete lines from `offset` on (at least one whole line even when it is longer than a chunk). */
function readLines(fd: number, offset: number, size: number): { texts: string[]; consumed: number } {
  let length = Math.min(CHUNK_BYTES, size - offset);
  for (;;) {
    if (length <= 0) return { texts: [], consumed: 0 };
    const buffer = Buffer.allocUnsafe(length);
    let read = 0;
    while (read < length) {
      const got = readSync(fd, buffer, read, length - read, offset + read);
      if (got === 0) break;
      read += got;
    }
    const end = buffer.lastIndexOf(10, read - 1);
    if (end >= 0) return { texts: buffer.toString("utf8", 0, end).split("\n"), consumed: end + 1 };
    // One line longer than the chunk: read more of it, up to the end of the file.
    if (offset + length >= size) return { texts: [], consumed: 0 };
    length = Math.min(length * 2, size - offset);
  }
}

function parseHeader(line: string): SpoolHeader {
  try {
    const value = JSON.parse(line) as Partial<SpoolHeader>;
    if (typeof value.spool === "number" && typeof value.pid === "number" && typeof value.host === "string") return { spool: value.spool, pid: value.pid, host: value.host };
  } catch {
    // Below.
  }
  // Not a header: a file that only looks like a spool's. Treat it as from an unknown version, so it is never deleted.
  return { spool: Number.MAX_SAFE_INTEGER, pid: 0, host: "" };
}

function parseEntry(line: string): SpoolEntry | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    return value !== null && typeof value === "object" ? (value as SpoolEntry) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Apply one line, all of it or none (a savepoint): undefined when it went in, else why it was dropped (a value of
 * the wrong type, a part missing, a row SQLite refuses). Any other failure (a busy database, a full disk, damage)
 * stops the merge, as before.
 */
function applyLine(statements: Statements, entry: Exclude<SpoolEntry, { close: true }>, header: SpoolHeader): string | undefined {
  statements.savepoint.run();
  try {
    apply(statements, entry, header);
    statements.release.run();
    return undefined;
  } catch (error) {
    if (!isBadLine(error)) throw error;
    statements.rollbackTo.run();
    statements.release.run();
    return (error as Error).message;
  }
}

/** A failure that comes from the line itself: a value SQLite cannot take, a shape the merge cannot read, a row refused. */
function isBadLine(error: unknown): boolean {
  if (error instanceof BadSpoolValue || error instanceof TypeError) return true;
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_CONSTRAINT") || code.startsWith("SQLITE_MISMATCH"));
}

/** Dropped lines named one by one in a chunk; past that they are counted. */
const MAX_NAMED_DROPS = 10;

/** Which kind of line an entry is, by the keys lllm writes (a key of the file's own is never quoted). */
function kindOf(entry: object): string {
  return ["begin", "calls", "finish", "start", "outcome", "resume"].find((kind) => kind in entry) ?? "unknown";
}

/** The line number of the line that starts at byte `offset` of the file (counted only for a line that is dropped). */
function lineNumberAt(fd: number, offset: number): number {
  const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(1, offset)));
  let lines = 1;
  for (let at = 0; at < offset; ) {
    const got = readSync(fd, buffer, 0, Math.min(buffer.length, offset - at), at);
    if (got === 0) break;
    for (let index = 0; index < got; index += 1) if (buffer[index] === 10) lines += 1;
    at += got;
  }
  return lines;
}

function apply(statements: Statements, entry: Exclude<SpoolEntry, { close: true }>, header: SpoolHeader): void {
  if ("begin" in entry) {
    const run: RunStart = entry.begin;
    statements.begin.run(run.id, run.startedAt, run.tacticPath, run.tacticName, run.configDigest, run.input, JSON.stringify(run.vars), JSON.stringify(run.models), run.lllmVersion, run.parentRun ?? null, run.continuesRun ?? null, run.batchId ?? null, header.pid, header.host, run.cwd ?? null, run.test?.file ?? null, run.test?.case ?? null, run.served ? JSON.stringify(run.served) : null, run.resume ? JSON.stringify(run.resume) : null, run.batchItem ?? null);
  } else if ("start" in entry) {
    const start = entry.start;
    statements.toolStart.run(start.run, start.key, start.agent, start.name, JSON.stringify(start.arguments), start.rerun ?? null, start.at);
  } else if ("outcome" in entry) {
    const { run, key, outcome, at, row, resultInRow, resultIsBody } = entry.outcome;
    statements.toolOutcome.run(resultInRow && row?.result != null ? wholeOutcome(outcome, row.result, resultIsBody === true) : outcome, at, run, key);
    if (row) insertCalls(statements, run, { model: [], tool: [row] });
  } else if ("resume" in entry) {
    const { run, attempt, startedAt, from, earlierMs, askedAgain } = entry.resume;
    // The run is running again, in this writer's process: a reader marks it crashed if that one dies too.
    statements.reopen.run(header.pid, header.host, run);
    statements.attempt.run(run, attempt, startedAt, header.pid, header.host, from.modelSeq, from.toolSeq, from.step, earlierMs ?? null, askedAgain ?? null);
  } else if ("calls" in entry) {
    insertCalls(statements, entry.calls.run, entry.calls);
  } else if ("finish" in entry) {
    const { run: id, end, calls } = entry.finish;
    if (calls) insertCalls(statements, id, calls);
    finish(statements, id, end);
  } else if ("test" in entry) {
    for (const id of entry.test.runs) statements.testStatus.run(entry.test.status, id);
  } else if ("response" in entry) {
    const { id, run, createdAt, body, history } = entry.response;
    statements.response.run(id, run, createdAt, body, history);
  } else if ("responseDeleted" in entry) {
    statements.deleteResponse.run(entry.responseDeleted.id);
  } else if ("a2aTask" in entry) {
    const { id, contextId, run, updatedAt, body } = entry.a2aTask;
    statements.a2aTask.run(id, contextId, run, updatedAt, body);
  }
}

/**
 * A journal outcome written without its `resultStr` (the row's result text: `resultInRow`), and without its string
 * `result` when that is the text's body (`resultIsBody`), whole again, its keys in `ToolOutcome`'s order.
 */
function wholeOutcome(outcome: string, resultStr: string, resultIsBody: boolean): string {
  let parsed: { turns?: number; error?: string; result?: unknown } & Record<string, unknown>;
  try {
    parsed = JSON.parse(outcome) as typeof parsed;
  } catch {
    // Not JSON (a redaction that cut into an escape): kept as it is, as before version 3, rather than stopping the
    // merge of everything after it; a resume reads it as an outcome it cannot use.
    return outcome;
  }
  const { turns, error, result, ...rest } = parsed;
  const body = resultIsBody ? formattedBody(resultStr) : result;
  return JSON.stringify({ ...(turns !== undefined ? { turns } : {}), resultStr, ...(error !== undefined ? { error } : {}), ...(body !== undefined ? { result: body } : {}), ...rest });
}

/** The messages as the store keeps them: a tool result that refers to its row (`resultOf`) holds the row's text. */
function withResults(statements: Statements, runId: string, messages: StoredMessage[]): StoredMessage[] {
  if (!messages.some((message) => message.resultOf !== undefined)) return messages;
  return messages.map((message) => {
    if (message.resultOf === undefined) return message;
    const { resultOf, ...rest } = message;
    // The row of that number, if it is this call's: one of another call (a run recorded again under its first
    // attempt's id by an lllm that numbered its rows anew, calls ending in another order) gives way to this call's own.
    let row = statements.toolResult.row(runId, resultOf) as [unknown, unknown] | undefined;
    if (row !== undefined && row[1] !== rest.toolCallId) row = statements.toolResultOfCall.row(runId, rest.toolCallId ?? null) as [unknown, unknown] | undefined;
    const text = blobText(row?.[0]);
    return { ...rest, content: typeof text === "string" ? text : null };
  });
}

function insertCalls(statements: Statements, runId: string, calls: RunCalls): void {
  // Tool rows first: a model call of the same line may refer to them (a `finish` line carries both).
  for (const call of calls.tool ?? []) {
    statements.toolCall.run(runId, call.seq, call.step, call.agent, call.call_id, call.name, JSON.stringify(call.arguments), call.result, call.status, call.error, call.duration_ms, call.ended_at);
  }
  for (const { record: call, messagesKept } of calls.model ?? []) {
    statements.modelCall.run(runId, call.seq, call.step, call.agent, call.round, call.model, call.started_at, call.latency_ms, messagesKept, JSON.stringify(withResults(statements, runId, call.messages)), JSON.stringify(call.tools), call.reply, JSON.stringify(call.tool_calls), call.finish_reason, call.prompt_tokens, call.cached_prompt_tokens, call.completion_tokens, call.reasoning_tokens, call.cost, JSON.stringify(call.retries ?? []), call.cache_write_prompt_tokens ?? 0, call.batch ? 1 : 0, call.carry ? JSON.stringify(call.carry) : null);
  }
}

function finish(statements: Statements, runId: string, end: RunEnd): void {
  // Only a run still open takes its end (`crashed`: a reader saw its process gone before this line was merged).
  const row = statements.open.row(runId) as [unknown] | undefined;
  const status = blobText(row?.[0]);
  if (!row || (status !== "running" && status !== "crashed")) return;
  statements.finish.run(end.endedAt, end.status, end.exitCode, end.errorCode, end.errorMessage, end.output, end.details, JSON.stringify(end.models), end.promptTokens, end.cachedPromptTokens, end.completionTokens, end.reasoningTokens, end.llmCalls, end.cost, end.durationMs, runId);
  const output = decodeOutput(end.output);
  statements.search.run(typeof output === "string" ? output : output === null ? "" : JSON.stringify(output), runId);
}

type Statements = ReturnType<typeof prepare>;

/** A value of a spool line that SQLite cannot take where it goes (see `CheckedStatement`). */
class BadSpoolValue extends Error {}

/**
 * A prepared statement whose values are checked before libsql sees them: the spool is a file on disk, and libsql
 * aborts the whole process on a boolean, throws on an object, and spreads an array over the next parameters.
 */
class CheckedStatement {
  readonly #statement: Libsql.Statement<unknown[]>;

  constructor(statement: Libsql.Statement<unknown[]>) {
    this.#statement = statement;
  }

  run(...values: unknown[]): void {
    this.#statement.run(...checked(values));
  }

  /** The first row, as an array of its columns. */
  row(...values: unknown[]): unknown {
    return this.#statement.raw().get(...checked(values));
  }
}

function checked(values: unknown[]): unknown[] {
  for (const value of values) {
    // undefined binds as NULL, like the `?? null` of an optional field.
    if (value === null || value === undefined || typeof value === "string" || typeof value === "number" || typeof value === "bigint" || Buffer.isBuffer(value)) continue;
    const kind = typeof value === "boolean" ? "a boolean" : Array.isArray(value) ? "a list" : typeof value === "object" ? "an object" : `a ${typeof value}`;
    throw new BadSpoolValue(`${kind} where a text, a number or null belongs`);
  }
  return values;
}

/** The merge's statements, prepared once per connection (the viewer merges at every request). */
const prepared = new WeakMap<Database, Statements>();

function statementsOf(database: Database): Statements {
  let statements = prepared.get(database);
  if (!statements) prepared.set(database, (statements = prepare(database)));
  return statements;
}

function prepare(database: Database) {
  // The merge's own bookkeeping, not part of the runs' schema (no version bump: an older lllm can still use the file).
  database.exec("CREATE TABLE IF NOT EXISTS spool_progress (name TEXT PRIMARY KEY, offset INTEGER NOT NULL, header TEXT, closed INTEGER NOT NULL DEFAULT 0)");
  const statement = (sql: string): CheckedStatement => new CheckedStatement(database.prepare(sql));
  return {
    // Each line goes in whole or not at all (see applyLine), inside the chunk's transaction.
    savepoint: statement("SAVEPOINT spool_line"),
    release: statement("RELEASE spool_line"),
    rollbackTo: statement("ROLLBACK TO spool_line"),
    progress: statement("SELECT offset, CAST(header AS BLOB), closed FROM spool_progress WHERE name = ?"),
    saveProgress: statement("INSERT INTO spool_progress (name, offset, header, closed) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET offset = excluded.offset, header = excluded.header, closed = excluded.closed"),
    forget: statement("DELETE FROM spool_progress WHERE name = ?"),
    // OR IGNORE: a line merged by an older database copy, or twice after a crash between a delete and its row, is harmless.
    begin: statement(
      `INSERT OR IGNORE INTO runs (id, started_at, status, tactic_path, tactic_name, config_digest, input, vars, models, lllm_version, parent_run, continues_run, batch_id, pid, host, cwd, test_file, test_case, served, resume, batch_item)
       VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    modelCall: statement(
      `INSERT OR IGNORE INTO model_calls (run_id, seq, step, agent, round, model, started_at, latency_ms, messages_kept, messages, tools, reply, tool_calls, finish_reason, prompt_tokens, cached_prompt_tokens, completion_tokens, reasoning_tokens, cost, retries, cache_write_prompt_tokens, batch, carry)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    toolCall: statement(`INSERT OR IGNORE INTO tool_calls (run_id, seq, step, agent, call_id, name, arguments, result, status, error, duration_ms, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    finish: statement(
      `UPDATE runs SET ended_at = ?, status = ?, exit_code = ?, error_code = ?, error_message = ?, output = ?, details = ?, models = ?, prompt_tokens = ?, cached_prompt_tokens = ?,
       completion_tokens = ?, reasoning_tokens = ?, llm_calls = ?, cost = ?, duration_ms = ? WHERE id = ?`,
    ),
    response: statement("INSERT OR REPLACE INTO served_responses (id, run_id, created_at, body, history) VALUES (?, ?, ?, ?, ?)"),
    deleteResponse: statement("DELETE FROM served_responses WHERE id = ?"),
    a2aTask: statement("INSERT OR REPLACE INTO a2a_tasks (id, context_id, run_id, updated_at, body) VALUES (?, ?, ?, ?, ?)"),
    // The journal: a call's start (kept if the line comes twice), then its outcome.
    toolStart: statement("INSERT OR IGNORE INTO tool_journal (run_id, key, agent, name, arguments, rerun, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)"),
    toolOutcome: statement("UPDATE tool_journal SET outcome = ?, ended_at = ? WHERE run_id = ? AND key = ? AND outcome IS NULL"),
    reopen: statement("UPDATE runs SET status = 'running', pid = ?, host = ?, ended_at = NULL, exit_code = NULL, error_code = NULL, error_message = NULL WHERE id = ?"),
    attempt: statement("INSERT OR IGNORE INTO run_attempts (run_id, attempt, started_at, pid, host, model_seq, tool_seq, step, earlier_ms, asked_again) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
    testStatus: statement("UPDATE runs SET test_status = ? WHERE id = ? AND test_file IS NOT NULL"),
    // As a blob: a text that is not UTF-8 (a damaged page) would abort the process inside libsql.
    open: statement("SELECT CAST(status AS BLOB) FROM runs WHERE id = ?"),
    toolResult: statement("SELECT CAST(result AS BLOB), call_id FROM tool_calls WHERE run_id = ? AND seq = ?"),
    toolResultOfCall: statement("SELECT CAST(result AS BLOB), call_id FROM tool_calls WHERE run_id = ? AND call_id = ? ORDER BY seq DESC LIMIT 1"),
    // The full-text row takes the run's rowid (the viewer joins a search's matches on it: migration 3).
    search: statement("INSERT OR REPLACE INTO runs_text (rowid, run_id, input, output) SELECT rowid, id, coalesce(input, ''), ? FROM runs WHERE id = ?"),
  };
}
