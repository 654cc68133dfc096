import { hostname } from "node:os";
import path from "node:path";
import type Libsql from "libsql";
import { openDatabase, openDatabaseSync, type Database } from "./openDatabase.js";
import type { ModelCallRecord, RunRecord, RunStatus, RunSummary, ToolCallStoredRecord } from "./RunRecord.js";
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
  /** The test case this run is (`lllm test`): the test file and the case's name. */
  test?: { file: string; case: string };
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

/** Model and tool calls to write (a model call's `messagesKept`: see `RunStore.addCalls`). */
export interface RunCalls {
  model: Array<{ record: ModelCallRecord; messagesKept: number }>;
  tool: ToolCallStoredRecord[];
}

/** Filters of `lllm logs`. */
export interface RunFilter {
  limit?: number;
  tactic?: string;
  status?: RunStatus;
  /** Runs started at or after this time (ms since the epoch). */
  since?: number;
  /** Full-text search over inputs and outputs (FTS5 query syntax). */
  search?: string;
}

type Row = Record<string, unknown>;

/**
 * The run store: one SQLite file (`$LLLM_HOME/logs.db`) holding every run, model call and tool call. Writes are
 * synchronous and small (one row per event), so many processes can log into one file at once (WAL + busy wait).
 * Text given to it must already be redacted (the `RunRecorder` does that).
 */
/** This machine's name, asked once (a batch makes a store object per item). */
let host: string | undefined;

/** The connections `RunStore.shared` keeps, by absolute file name. */
const sharedDatabases = new Map<string, Database>();

type Statement = Libsql.Statement<unknown[]>;
/**
 * The write statements of each connection, prepared once: a batch writes three or four rows per item, and preparing
 * their SQL each time cost more than running it.
 */
const preparedStatements = new WeakMap<Database, Map<string, Statement>>();

export class RunStore {
  readonly file: string;
  readonly #database: Database;
  readonly #host = (host ??= hostname());

  private constructor(file: string, database: Database, shared: boolean) {
    this.file = file;
    this.#database = database;
    this.#shared = shared;
  }

  readonly #shared: boolean;

  static async open(file: string): Promise<RunStore> {
    return new RunStore(file, await openDatabase(file), false);
  }

  /** `open`, at once, with a connection of its own. */
  static openSync(file: string): RunStore {
    return new RunStore(file, openDatabaseSync(file), false);
  }

  /**
   * The process's one connection to `file`, opened (and migrated) on first use and kept until the process exits:
   * for the recorders of runs, so that a batch of thousands of runs does not open the database thousands of times.
   * Synchronous, for a recorder that opens the store from an event handler or at exit.
   */
  static shared(file: string): RunStore {
    const key = path.resolve(file);
    let database = sharedDatabases.get(key);
    if (!database) {
      database = openDatabaseSync(file);
      sharedDatabases.set(key, database);
    }
    return new RunStore(file, database, true);
  }

  /** Close the connection; a shared one stays open for the process's next run unless it failed (`broken`). */
  close(options: { broken?: boolean } = {}): void {
    if (this.#shared && !options.broken) return;
    if (this.#shared) sharedDatabases.delete(path.resolve(this.file));
    this.#database.close();
  }

  /** A statement of this connection, prepared on first use and kept (for the writes every run makes). */
  #statement(sql: string): Statement {
    let statements = preparedStatements.get(this.#database);
    if (!statements) preparedStatements.set(this.#database, (statements = new Map()));
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = this.#database.prepare(sql)));
    return statement;
  }

  beginRun(run: RunStart): void {
    this.#statement(
        `INSERT INTO runs (id, started_at, status, tactic_path, tactic_name, config_digest, input, vars, models, lllm_version, parent_run, continues_run, batch_id, pid, host, cwd, test_file, test_case)
         VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(run.id, run.startedAt, run.tacticPath, run.tacticName, run.configDigest, run.input, JSON.stringify(run.vars), JSON.stringify(run.models), run.lllmVersion, run.parentRun ?? null, run.continuesRun ?? null, run.batchId ?? null, process.pid, this.#host, process.cwd(), run.test?.file ?? null, run.test?.case ?? null);
  }

  /**
   * Write model calls and tool calls in one transaction (a commit per row would cost more than the loop itself).
   * A model call's `messages` are only those new since the same agent's previous call; `messagesKept` says how
   * many of that call's messages come first (a dialog only grows, so each call is stored once, not again and
   * again: a 100-round run would otherwise store 100 copies of its start).
   */
  addCalls(runId: string, calls: RunCalls): void {
    this.#database.transaction(() => this.#insertCalls(runId, calls))();
  }

  #insertCalls(runId: string, calls: RunCalls): void {
    if (calls.model.length > 0) {
      const insertModel = this.#statement(
        `INSERT INTO model_calls (run_id, seq, step, agent, round, model, started_at, latency_ms, messages_kept, messages, tools, reply, tool_calls, finish_reason, prompt_tokens, cached_prompt_tokens, completion_tokens, reasoning_tokens, cost, retries)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const { record: call, messagesKept } of calls.model) {
        insertModel.run(runId, call.seq, call.step, call.agent, call.round, call.model, call.started_at, call.latency_ms, messagesKept, JSON.stringify(call.messages), JSON.stringify(call.tools), call.reply, JSON.stringify(call.tool_calls), call.finish_reason, call.prompt_tokens, call.cached_prompt_tokens, call.completion_tokens, call.reasoning_tokens, call.cost, JSON.stringify(call.retries));
      }
    }
    if (calls.tool.length > 0) {
      const insertTool = this.#statement(`INSERT INTO tool_calls (run_id, seq, step, agent, call_id, name, arguments, result, status, error, duration_ms, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
      for (const call of calls.tool) insertTool.run(runId, call.seq, call.step, call.agent, call.call_id, call.name, JSON.stringify(call.arguments), call.result, call.status, call.error, call.duration_ms, call.ended_at);
    }
  }

  /** Record how the run ended, with its calls not yet written (`calls`) in the same transaction: one commit. */
  finishRun(runId: string, end: RunEnd, calls?: RunCalls): void {
    const update = this.#database.transaction(() => {
      if (calls) this.#insertCalls(runId, calls);
      this.#statement(
        `UPDATE runs SET ended_at = ?, status = ?, exit_code = ?, error_code = ?, error_message = ?, output = ?, details = ?, models = ?, prompt_tokens = ?, cached_prompt_tokens = ?,
         completion_tokens = ?, reasoning_tokens = ?, llm_calls = ?, cost = ?, duration_ms = ? WHERE id = ?`,
      ).run(end.endedAt, end.status, end.exitCode, end.errorCode, end.errorMessage, end.output, end.details, JSON.stringify(end.models), end.promptTokens, end.cachedPromptTokens, end.completionTokens, end.reasoningTokens, end.llmCalls, end.cost, end.durationMs, runId);
      const output = decodeOutput(end.output);
      const searchable = typeof output === "string" ? output : output === null ? "" : JSON.stringify(output);
      // The full-text row takes the run's rowid (the viewer joins a search's matches on it: migration 3).
      this.#statement("INSERT OR REPLACE INTO runs_text (rowid, run_id, input, output) SELECT rowid, id, coalesce(input, ''), ? FROM runs WHERE id = ?").run(searchable, runId);
    });
    update();
  }

  /**
   * Record whether the test cases these runs are passed (`lllm test`, once their assertions are checked), in one
   * transaction: a commit per case would cost more than replaying it.
   */
  setTestStatus(outcomes: ReadonlyArray<{ runIds: readonly string[]; status: "passed" | "failed" }>): void {
    const statement = this.#statement("UPDATE runs SET test_status = ? WHERE id = ? AND test_file IS NOT NULL");
    this.#database.transaction(() => {
      for (const { runIds, status } of outcomes) for (const id of runIds) statement.run(status, id);
    })();
  }

  /** Runs newest first. */
  listRuns(filter: RunFilter = {}): RunSummary[] {
    this.markCrashed();
    const where: string[] = [];
    const values: unknown[] = [];
    if (filter.tactic !== undefined) {
      where.push("(tactic_name = ? OR tactic_path = ? OR tactic_path LIKE ?)");
      values.push(filter.tactic, filter.tactic, `%${filter.tactic}`);
    }
    if (filter.status !== undefined) {
      where.push("status = ?");
      values.push(filter.status);
    }
    if (filter.since !== undefined) {
      where.push("started_at >= ?");
      values.push(filter.since);
    }
    if (filter.search !== undefined) {
      where.push("id IN (SELECT run_id FROM runs_text WHERE runs_text MATCH ?)");
      values.push(ftsQuery(filter.search));
    }
    const sql = `SELECT * FROM runs ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ?`;
    return this.#database
      .prepare(sql)
      .all(...values, filter.limit ?? 20)
      .map((row) => toSummary(row as Row));
  }

  /** A whole run by id, unique id prefix, or `last`. */
  getRun(idOrLast: string): RunRecord | undefined {
    this.markCrashed();
    const id = this.resolveId(idOrLast);
    if (id === undefined) return undefined;
    const row = this.#database.prepare("SELECT * FROM runs WHERE id = ?").get(id) as Row | undefined;
    if (!row) return undefined;
    // Each call's full messages: the kept start of the agent's previous call, then the call's own new ones.
    const previous = new Map<string, ModelCallRecord["messages"]>();
    const modelCalls = this.#database
      .prepare("SELECT * FROM model_calls WHERE run_id = ? ORDER BY seq")
      .all(id)
      .map((entry) => {
        const call = toModelCall(entry as Row);
        const kept = integer((entry as Row).messages_kept) ?? 0;
        call.messages = [...(previous.get(call.agent) ?? []).slice(0, kept), ...call.messages];
        previous.set(call.agent, call.messages);
        return call;
      });
    const toolCalls = this.#database.prepare("SELECT * FROM tool_calls WHERE run_id = ? ORDER BY seq").all(id).map((entry) => toToolCall(entry as Row));
    return { ...toSummary(row), details: json(row.details, null), model_calls: modelCalls, tool_calls: toolCalls };
  }

  /** The full id of `last` or a unique prefix; undefined when none matches. Throws when a prefix is ambiguous. */
  resolveId(idOrLast: string): string | undefined {
    if (idOrLast === "last") return scalar(this.#database.prepare("SELECT id FROM runs ORDER BY id DESC LIMIT 1").raw().get()) as string | undefined;
    const ids = this.#database.prepare("SELECT id FROM runs WHERE id LIKE ? ORDER BY id DESC LIMIT 2").raw().all(`${idOrLast.toUpperCase()}%`).map(scalar) as string[];
    if (ids.length > 1) throw new AmbiguousRunIdError(idOrLast);
    return ids[0];
  }

  /** Delete the runs that started before `before` (ms since the epoch), with their calls; returns how many. */
  prune(before: number): number {
    const remove = this.#database.transaction(() => {
      const ids = this.#database.prepare("SELECT id FROM runs WHERE started_at < ? AND status != 'running'").raw().all(before);
      for (const table of ["model_calls", "tool_calls", "runs_text"]) this.#database.prepare(`DELETE FROM ${table} WHERE run_id IN (SELECT id FROM runs WHERE started_at < ? AND status != 'running')`).run(before);
      this.#database.prepare("DELETE FROM runs WHERE started_at < ? AND status != 'running'").run(before);
      return ids.length;
    });
    return remove();
  }

  /** A run still marked running whose process (on this machine) is gone was killed: it reads as crashed. */
  markCrashed(): void {
    const running = this.#database.prepare("SELECT id, pid FROM runs WHERE status = 'running' AND host = ?").all(this.#host) as Array<{ id: string; pid: number | null }>;
    for (const run of running) {
      if (run.pid !== null && run.pid !== process.pid && !processAlive(run.pid)) {
        this.#database.prepare("UPDATE runs SET status = 'crashed' WHERE id = ? AND status = 'running'").run(run.id);
      }
    }
  }
}

export class AmbiguousRunIdError extends Error {
  constructor(readonly prefix: string) {
    super(`run id prefix \`${prefix}\` matches more than one run`);
  }
}

/** The first value of a `raw()` row (libsql's `pluck()` does not pluck). */
function scalar(row: unknown): unknown {
  return Array.isArray(row) ? row[0] : undefined;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Each word of the user's text as a quoted FTS5 term: `--search` takes plain words, not FTS5 syntax. */
export function ftsQuery(text: string): string {
  const words = text.split(/\s+/).filter((word) => word.length > 0);
  return words.map((word) => `"${word.replace(/"/g, '""')}"`).join(" ") || '""';
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

function integer(value: unknown): number | null {
  return typeof value === "number" || typeof value === "bigint" ? Number(value) : null;
}

function toSummary(row: Row): RunSummary {
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
    pid: integer(row.pid),
    cwd: text(row.cwd),
  };
}

/** The stored form of an answer (see `decodeOutput`). */
export function encodeOutput(output: unknown): string | null {
  if (output === undefined) return null;
  return JSON.stringify(typeof output === "string" ? { text: output } : { json: output });
}

/** Output is stored as `{"text": …}` or `{"json": …}` so that a text answer that looks like JSON stays text. */
function decodeOutput(value: unknown): unknown {
  const stored = json<{ text?: string; json?: unknown } | null>(value, null);
  if (stored === null) return null;
  return "text" in stored ? stored.text : stored.json;
}

function toModelCall(row: Row): ModelCallRecord {
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
  };
}

function toToolCall(row: Row): ToolCallStoredRecord {
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
