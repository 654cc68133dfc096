import { existsSync } from "node:fs";
import path from "node:path";
import { damaged, isDamage, openDatabaseSync, userVersion, type Database, type OpenedDatabase } from "./openDatabase.js";
import { mergeSpool } from "./mergeSpool.js";
import { processAlive } from "../util/processAlive.js";
import type { ModelCallRecord, RunRecord, RunStatus, RunSummary } from "./RunRecord.js";
import { host } from "./RunSpool.js";
import { StoreError } from "./StoreError.js";
import { spoolFiles, spoolFolder } from "./storeFiles.js";
import { trustHint } from "../config/distrust.js";
import type { ServedA2aTask, ServedResponse } from "./SpoolEntry.js";
import { blobText, decodeRow, integer, MODEL_CALL_COLUMNS, RUN_COLUMNS, scalar, toModelCall, toSummary, toToolCall, TOOL_CALL_COLUMNS, type Row } from "./storedRows.js";

/** Filters of `lllm logs`. */
export interface RunFilter {
  limit?: number;
  tactic?: string;
  status?: RunStatus;
  /** Runs started at or after this time (ms since the epoch). */
  since?: number;
  /** Full-text search over inputs and outputs (FTS5 query syntax). */
  search?: string;
  /** Only the runs \`lllm serve\` ran (\`lllm logs --served\`). */
  served?: boolean;
}

export interface RunStoreOptions {
  /** Told when runs recorded in the spool cannot be merged (the file is read-only to this user, or newer); once per store. */
  warn?: (message: string) => void;
}

/**
 * The run store as read: one SQLite file (`$LLLM_HOME/logs.db`) holding every run, model call and tool call. Runs
 * are recorded into the spool beside it (`RunSpool`: no database on a run's path) and merged in here whenever the
 * store is opened or read, so what is listed includes the runs going on right now. A store this user cannot write
 * (or one of a newer schema) is still read; only the merge is left for whoever can.
 */
export class RunStore {
  readonly file: string;
  readonly #database: Database;
  readonly #readOnly: string | undefined;
  /** The log could not be opened nor made: the store is in memory, and holds the spool's runs (its files kept). */
  readonly #inMemory: boolean;
  readonly #warn: ((message: string) => void) | undefined;
  #warned = false;
  /** Whether what stops dropped lines being said at every read was told (see `#sayDropped`): once per store. */
  #hinted = false;

  private constructor(file: string, opened: OpenedDatabase, options: RunStoreOptions) {
    this.file = file;
    this.#database = opened.database;
    this.#readOnly = opened.readOnly;
    this.#inMemory = opened.inMemory === true;
    this.#warn = options.warn;
  }

  /** Open the store (made when missing) and merge the spool into it. Throws a `StoreError` for a damaged file. */
  static async open(file: string, options: RunStoreOptions = {}): Promise<RunStore> {
    return RunStore.openSync(file, options);
  }

  /** `open`, at once (libsql is synchronous). */
  static openSync(file: string, options: RunStoreOptions = {}): RunStore {
    const opened = openDatabaseSync(file);
    const { database } = opened;
    const store = new RunStore(file, opened, options);
    try {
      store.#reading(() => undefined);
    } catch (error) {
      database.close();
      throw error;
    }
    return store;
  }

  /** Whether anything was ever recorded for `file`: the database, or runs still in its spool. */
  static exists(file: string): boolean {
    return existsSync(file) || spoolFiles(spoolFolder(file)).length > 0;
  }

  /** Why this store is not written to (its runs are still read); undefined when it is. */
  get readOnly(): string | undefined {
    return this.#readOnly;
  }

  close(): void {
    this.#database.close();
  }

  /** The schema version of the file as it is now (another lllm, a newer one, may have migrated it since the open). */
  schemaVersion(): number {
    return userVersion(this.#database);
  }

  /**
   * Copy what the write-ahead log holds into the database file, without waiting for anyone. SQLite does it when the
   * last connection to the file closes: a process that keeps one open (a server) would otherwise leave the newest runs
   * in `logs.db-wal` only, lost to whoever moves `logs.db` aside (as a damaged log's fix says) or copies it alone.
   */
  checkpoint(): void {
    if (this.#readOnly !== undefined || this.#inMemory) return;
    try {
      this.#database.pragma("wal_checkpoint(PASSIVE)");
    } catch {
      // Busy or unwritable now: the next look-up does it.
    }
  }

  /** Runs newest first. */
  listRuns(filter: RunFilter = {}): RunSummary[] {
    return this.#reading(() => {
      const { where, values } = matching(filter);
      const sql = `SELECT ${RUN_COLUMNS} FROM runs ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ?`;
      return this.#database
        .prepare(sql)
        .all(...values, filter.limit ?? 20)
        .map((row) => toSummary(decodeRow(row)));
    });
  }

  /** A whole run by id, unique id prefix, or `last`. */
  getRun(idOrLast: string): RunRecord | undefined {
    return this.#reading(() => {
      const id = this.#resolveId(idOrLast);
      if (id === undefined) return undefined;
      const found = this.#database.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`).get(id) as Row | undefined;
      if (!found) return undefined;
      const row = decodeRow(found);
      // Each call's full messages: the kept start of the agent's previous call, then the call's own new ones.
      const previous = new Map<string, ModelCallRecord["messages"]>();
      const modelCalls = this.#database
        .prepare(`SELECT ${MODEL_CALL_COLUMNS} FROM model_calls WHERE run_id = ? ORDER BY seq`)
        .all(id)
        .map((entry) => {
          const decoded = decodeRow(entry);
          const call = toModelCall(decoded);
          const kept = integer(decoded.messages_kept) ?? 0;
          call.messages = [...(previous.get(call.agent) ?? []).slice(0, kept), ...call.messages];
          previous.set(call.agent, call.messages);
          return call;
        });
      const toolCalls = this.#database
        .prepare(`SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE run_id = ? ORDER BY seq`)
        .all(id)
        .map((entry) => toToolCall(decodeRow(entry)));
      const attempts = this.#database
        .prepare("SELECT attempt, started_at, model_seq, tool_seq, step, earlier_ms, asked_again FROM run_attempts WHERE run_id = ? ORDER BY attempt")
        .all(id)
        .map((entry) => {
          const value = entry as Row;
          return { attempt: integer(value.attempt) ?? 0, started_at: integer(value.started_at) ?? 0, model_seq: integer(value.model_seq) ?? 0, tool_seq: integer(value.tool_seq) ?? 0, step: integer(value.step) ?? 0, earlier_ms: integer(value.earlier_ms), asked_again: integer(value.asked_again) };
        });
      return { ...toSummary(row), details: parseDetails(row.details), model_calls: modelCalls, tool_calls: toolCalls, attempts };
    });
  }

  /**
   * What a resume of run `id` replays from besides its calls: the flags and setup it ran with (`resume`, null for a
   * run recorded without a journal), and its tool journal (each call started, with its outcome when it ended).
   */
  getJournal(id: string): { resume: unknown; batchItem: string | null; tools: JournalEntry[] } | undefined {
    return this.#reading(() => {
      const found = this.#database.prepare("SELECT CAST(resume AS BLOB) AS resume, CAST(batch_item AS BLOB) AS batch_item FROM runs WHERE id = ?").get(id) as Row | undefined;
      if (!found) return undefined;
      const row = decodeRow(found);
      const tools = this.#database
        .prepare("SELECT CAST(key AS BLOB) AS key, CAST(agent AS BLOB) AS agent, CAST(name AS BLOB) AS name, CAST(arguments AS BLOB) AS arguments, CAST(rerun AS BLOB) AS rerun, started_at, CAST(outcome AS BLOB) AS outcome, ended_at FROM tool_journal WHERE run_id = ? ORDER BY started_at, rowid")
        .all(id)
        .map((entry) => {
          const value = decodeRow(entry);
          return {
            key: String(value.key),
            agent: String(value.agent),
            name: String(value.name),
            arguments: String(value.arguments),
            rerun: value.rerun === "idempotent" || value.rerun === "replays" ? value.rerun : null,
            startedAt: integer(value.started_at) ?? 0,
            outcome: typeof value.outcome === "string" ? value.outcome : null,
            endedAt: integer(value.ended_at),
          } satisfies JournalEntry;
        });
      return { resume: parseJson(row.resume), batchItem: typeof row.batch_item === "string" ? row.batch_item : null, tools };
    });
  }

  /**
   * The id of the latest run started from folder `cwd` (of tactic file `tacticPath`, when given) that was interrupted
   * or crashed and can be resumed (`lllm run --resume` without an id); or whose resume stopped on a mistake of its own
   * (exit 2 after an attempt: a key not set in that shell), which leaves it as it was.
   */
  lastStopped(options: { cwd: string; tacticPath?: string }): string | undefined {
    return this.#reading(() => {
      const where = ["(status IN ('interrupted', 'crashed') OR (status = 'error' AND exit_code = 2 AND EXISTS (SELECT 1 FROM run_attempts WHERE run_attempts.run_id = runs.id)))", "resume IS NOT NULL", "batch_item IS NULL", "test_file IS NULL", "parent_run IS NULL", "cwd = ?"];
      const values: unknown[] = [options.cwd];
      if (options.tacticPath !== undefined) {
        where.push("tactic_path = ?");
        values.push(options.tacticPath);
      }
      return scalar(this.#database.prepare(`SELECT CAST(id AS BLOB) FROM runs WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT 1`).raw().get(...values)) as string | undefined;
    });
  }

  /**
   * The batch items (by `batchItemKey`, those starting with `prefix`: one `--out` file's) whose latest run stopped
   * before its end (crashed or interrupted), with that run's id: a batch run again resumes them.
   */
  stoppedBatchItems(prefix: string): Map<string, string> {
    return this.#reading(() => {
      // The keys of one prefix are one range of the index: `prefix` up to the same with its last character raised.
      const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
      const rows = this.#database.prepare("SELECT CAST(batch_item AS BLOB), CAST(id AS BLOB), CAST(status AS BLOB) FROM runs WHERE batch_item >= ? AND batch_item < ? ORDER BY started_at").raw().all(prefix, end) as Array<[unknown, unknown, unknown]>;
      const latest = new Map<string, { id: string; status: unknown }>();
      for (const [key, id, status] of rows) latest.set(String(blobText(key)), { id: String(blobText(id)), status: blobText(status) });
      const stopped = new Map<string, string>();
      for (const [key, run] of latest) if (run.status === "crashed" || run.status === "interrupted") stopped.set(key, run.id);
      return stopped;
    });
  }

  /** A response `lllm serve`'s Responses API kept (`GET /v1/responses/{id}`, `previous_response_id`), by its id. */
  getResponse(id: string): ServedResponse | undefined {
    return this.#reading(() => {
      const row = this.#database.prepare("SELECT CAST(id AS BLOB) AS id, CAST(run_id AS BLOB) AS run_id, created_at, CAST(body AS BLOB) AS body, CAST(history AS BLOB) AS history FROM served_responses WHERE id = ?").get(id) as Row | undefined;
      if (!row) return undefined;
      const decoded = decodeRow(row);
      return { id: String(decoded.id), run: typeof decoded.run_id === "string" ? decoded.run_id : null, createdAt: Number(decoded.created_at), body: String(decoded.body), history: typeof decoded.history === "string" ? decoded.history : null };
    });
  }

  /** An A2A task `lllm serve` kept (`tasks/get`), by its id. */
  getA2aTask(id: string): ServedA2aTask | undefined {
    return this.#reading(() => {
      const row = this.#database.prepare("SELECT CAST(id AS BLOB) AS id, CAST(context_id AS BLOB) AS context_id, CAST(run_id AS BLOB) AS run_id, updated_at, CAST(body AS BLOB) AS body FROM a2a_tasks WHERE id = ?").get(id) as Row | undefined;
      if (!row) return undefined;
      const decoded = decodeRow(row);
      return { id: String(decoded.id), contextId: String(decoded.context_id), run: typeof decoded.run_id === "string" ? decoded.run_id : null, updatedAt: Number(decoded.updated_at), body: String(decoded.body) };
    });
  }

  /** The full id of `last` or a unique prefix; undefined when none matches. Throws when a prefix is ambiguous. */
  resolveId(idOrLast: string): string | undefined {
    return this.#reading(() => this.#resolveId(idOrLast));
  }

  #resolveId(idOrLast: string): string | undefined {
    if (idOrLast === "last") return scalar(this.#database.prepare("SELECT CAST(id AS BLOB) FROM runs ORDER BY id DESC LIMIT 1").raw().get()) as string | undefined;
    const ids = this.#database.prepare("SELECT CAST(id AS BLOB) FROM runs WHERE id LIKE ? ORDER BY id DESC LIMIT 2").raw().all(`${idOrLast.toUpperCase()}%`).map(scalar) as string[];
    if (ids.length > 1) throw new AmbiguousRunIdError(idOrLast);
    return ids[0];
  }

  /**
   * Delete the runs that started before `before` (ms since the epoch), with their calls, their journals, and what
   * `lllm serve` kept of them (Responses API responses, A2A tasks); returns how many runs.
   */
  prune(before: number, filter: Omit<RunFilter, "limit" | "since"> = {}, options: { dryRun?: boolean } = {}): { count: number; runs: RunSummary[] } {
    return this.#reading(() => {
      if (this.#readOnly !== undefined && !options.dryRun) throw new StoreError("store_read_only", `cannot delete runs from the run log: ${this.#readOnly}`, { location: { file: this.file }, hint: "Prune as the user who owns the log, with the lllm that wrote it." });
      const { where, values } = matching(filter, { exactTactic: true });
      // A running run is never deleted, whatever the filters say.
      const selected = `SELECT id FROM runs WHERE ${["started_at < ?", "status != 'running'", ...where].join(" AND ")}`;
      const selectedValues = [before, ...values];
      if (options.dryRun) {
        const runs = this.#database.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE id IN (${selected}) ORDER BY id DESC`).all(...selectedValues).map((row) => toSummary(decodeRow(row)));
        return { count: runs.length, runs };
      }
      const remove = this.#database.transaction((): number => {
        this.#database.prepare("CREATE TEMP TABLE IF NOT EXISTS pruned (id TEXT PRIMARY KEY)").run();
        this.#database.prepare("DELETE FROM pruned").run();
        const count = this.#database.prepare(`INSERT INTO pruned ${selected}`).run(...selectedValues).changes;
        for (const table of ["model_calls", "tool_calls", "tool_journal", "run_attempts", "runs_text"]) this.#database.prepare(`DELETE FROM ${table} WHERE run_id IN (SELECT id FROM pruned)`).run();
        // A response or task is the wire copy of a run's answer: it goes with its run (or, kept without one, by age
        // when no filter picks runs).
        const unfiltered = where.length === 0;
        this.#database.prepare(`DELETE FROM served_responses WHERE run_id IN (SELECT id FROM pruned)${unfiltered ? " OR (run_id IS NULL AND created_at < ?)" : ""}`).run(...(unfiltered ? [before] : []));
        this.#database.prepare(`DELETE FROM a2a_tasks WHERE run_id IN (SELECT id FROM pruned)${unfiltered ? " OR (run_id IS NULL AND updated_at < ?)" : ""}`).run(...(unfiltered ? [before] : []));
        this.#database.prepare("DELETE FROM runs WHERE id IN (SELECT id FROM pruned)").run();
        this.#database.prepare("DELETE FROM pruned").run();
        return count;
      });
      return { count: remove(), runs: [] };
    });
  }

  /**
   * Bring the store up to date for a reader on another connection (the viewer's queries): merge the spool and mark
   * the runs whose process is gone as crashed. Damage is a `StoreError`.
   */
  refresh(): void {
    this.#reading(() => undefined);
  }

  /** Bring the store up to date (merge the spool, mark crashed runs), then read; damage reads as a `StoreError`. */
  #reading<T>(read: () => T): T {
    try {
      this.#refresh();
      return read();
    } catch (error) {
      if (isDamage(error)) throw damaged(this.file, error);
      throw error;
    }
  }

  #refresh(): void {
    if (this.#readOnly !== undefined && !this.#inMemory) {
      const waiting = spoolFiles(spoolFolder(this.file)).length;
      if (waiting > 0) this.#warnOnce(`runs recorded in ${spoolFolder(this.file)} (${waiting} file${waiting === 1 ? "" : "s"}) are not shown: ${this.#readOnly}`);
      return;
    }
    try {
      const { skipped, dropped, saidAgain } = mergeSpool(this.#database, spoolFolder(this.file), { keepFiles: this.#inMemory });
      this.#sayDropped(dropped, saidAgain);
      // Another user's runs are not this user's to list (see mergeSpool); said, so that a log of one's own on a disk
      // that shows every file as anyone's (a Windows mount) does not look empty.
      if (skipped.length > 0) this.#warnOnce(`left out of the run log, not yours: ${skipped.join(", ")} in ${spoolFolder(this.file)} (${trustHint(spoolFolder(this.file))})`);
    } catch (error) {
      if (isDamage(error)) throw error;
      // Busy past the wait, or a full disk: show what the database holds; the next read merges again.
      this.#warnOnce(`the runs recorded in ${spoolFolder(this.file)} could not be merged into ${this.file} yet: ${(error as Error).message}`);
    }
    const running = this.#database.prepare("SELECT CAST(id AS BLOB), pid FROM runs WHERE status = 'running' AND host = ?").raw().all(host()) as Array<[unknown, number | null]>;
    for (const [id, pid] of running) {
      if (pid !== null && pid !== process.pid && !processAlive(Number(pid))) {
        // Its totals were to come with its end: they are those of the model calls it recorded (all its attempts').
        const runId = scalar([id]);
        this.#database.prepare(CRASHED).run(runId, runId);
      }
    }
  }

  /** Each dropped line is merged past once (kept files: said by their first reader only, see `droppedSaid`). */
  #sayDropped(dropped: string[], saidAgain: string | undefined): void {
    const folder = spoolFolder(this.file);
    for (const line of dropped) this.#warn?.(`a line of the run log's spool was dropped, its values not of the types recorded there (a damaged or edited file): ${line} in ${folder}`);
    if (saidAgain === undefined || this.#hinted) return;
    // Nowhere to remember it: every \`lllm logs\` says it again, so say too what ends that.
    this.#hinted = true;
    this.#warn?.(`the dropped lines above are said again at each reading of the log (${saidAgain}): to clear them, make ${path.dirname(this.file)} writable to you and run \`lllm logs\` once (the spool's runs go into ${path.basename(this.file)}, and its files are removed)`);
  }

  #warnOnce(message: string): void {
    if (this.#warned) return;
    this.#warned = true;
    this.#warn?.(message);
  }
}

/** A run whose process is gone without its end: crashed, with the totals of the model calls it recorded. */
const CRASHED = `UPDATE runs SET status = 'crashed', llm_calls = calls.n, prompt_tokens = calls.prompt, cached_prompt_tokens = calls.cached,
  completion_tokens = calls.completion, reasoning_tokens = calls.reasoning, cost = calls.cost
  FROM (SELECT COUNT(*) AS n, COALESCE(SUM(prompt_tokens), 0) AS prompt, COALESCE(SUM(cached_prompt_tokens), 0) AS cached,
    COALESCE(SUM(completion_tokens), 0) AS completion, COALESCE(SUM(reasoning_tokens), 0) AS reasoning,
    CASE WHEN COUNT(*) = 0 THEN 0 WHEN COUNT(cost) = COUNT(*) THEN SUM(cost) END AS cost
    FROM model_calls WHERE run_id = ?) AS calls
  WHERE id = ? AND status = 'running'`;

export class AmbiguousRunIdError extends Error {
  constructor(readonly prefix: string) {
    super(`run id prefix \`${prefix}\` matches more than one run`);
  }
}

/** One tool call of a run's journal: its key, what was called, whether it may run again, and its outcome once it ended. */
export interface JournalEntry {
  key: string;
  agent: string;
  name: string;
  /** The arguments as JSON text (redacted, as everything the store keeps). */
  arguments: string;
  rerun: "idempotent" | "replays" | null;
  startedAt: number;
  /** The outcome as `ToolJournal` keeps it (JSON); null: the call never ended (the run stopped during it). */
  outcome: string | null;
  endedAt: number | null;
}

function parseJson(value: unknown): unknown {
  if (typeof value !== "string") return null;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return null;
  }
}

function parseDetails(value: unknown): RunRecord["details"] {
  if (typeof value !== "string") return null;
  try {
    return JSON.parse(value) as RunRecord["details"];
  } catch {
    return null;
  }
}

/** Each word of the user's text as a quoted FTS5 term: `--search` takes plain words, not FTS5 syntax. */
export function ftsQuery(text: string): string {
  const words = text.split(/\s+/).filter((word) => word.length > 0);
  return words.map((word) => `"${word.replace(/"/g, '""')}"`).join(" ") || '""';
}

/** The SQL conditions of a filter on `runs` (all but its limit), and their values. */
function matching(filter: RunFilter, options: { exactTactic?: boolean } = {}): { where: string[]; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  if (filter.tactic !== undefined && options.exactTactic) {
    // What deletes matches a tactic by its name, its path, or its file name after a folder: `weather.yaml` is not
    // `myweather.yaml` (a listing may be looser).
    where.push("(tactic_name = ? OR tactic_path = ? OR substr(tactic_path, -?) = ?)");
    values.push(filter.tactic, filter.tactic, filter.tactic.length + 1, `/${filter.tactic}`);
  } else if (filter.tactic !== undefined) {
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
  if (filter.served) where.push("served IS NOT NULL");
  if (filter.search !== undefined) {
    where.push("id IN (SELECT run_id FROM runs_text WHERE runs_text MATCH ?)");
    values.push(ftsQuery(filter.search));
  }
  return { where, values };
}
