import type { Database } from "../openDatabase.js";
import type { RunStatus } from "../RunRecord.js";
import { ftsQuery } from "../RunStore.js";
import { decodeRow, scalar } from "../storedRows.js";

/** What the viewer's list can be narrowed to; every field is optional and they combine with AND. */
export interface ViewerFilter {
  status?: RunStatus;
  /** A tactic's name, exactly. */
  tactic?: string;
  /** A batch id, or `none`: only the runs that were not items of a batch. */
  batch?: string;
  /** Runs started at or after this time (ms since the epoch). */
  since?: number;
  /** Runs started before this time (ms since the epoch). */
  until?: number;
  /** Plain words, all of which the run's input or output holds. */
  search?: string;
  /** Only the runs of `lllm test` cases: `any`, or only those of cases that `passed` or `failed`. */
  test?: "any" | "passed" | "failed";
}

/**
 * One page of the list, newest first. Paging is by key (the run a page starts after), not by offset, so the
 * thousandth page costs what the first does: `before` a run id gives the page of older runs, `after` a run id the
 * page of newer ones, `after: ""` the oldest page.
 */
export interface ViewerPageRequest extends ViewerFilter {
  limit: number;
  before?: string;
  after?: string;
}

/** A run as the list shows it (the whole record is `RunStore.getRun`). */
export interface ViewerRunRow {
  id: string;
  started_at: number;
  status: RunStatus;
  tactic_name: string | null;
  models: string[];
  prompt_tokens: number;
  completion_tokens: number;
  cost: number | null;
  duration_ms: number | null;
  batch_id: string | null;
  /** The input's first 200 characters. */
  input: string | null;
  /** The `lllm test` case this run is: its test file, name and outcome (null for other runs). */
  test_file: string | null;
  test_case: string | null;
  test_status: "passed" | "failed" | null;
}

export interface ViewerPage {
  runs: ViewerRunRow[];
  /** How many runs match the filter. */
  total: number;
  /** How many matching runs are newer than this page's first (its position in the whole list). */
  offset: number;
}

export interface ViewerFacets {
  /** Every tactic name in the store, with its number of runs. */
  tactics: Array<{ name: string; runs: number }>;
  /** The 50 newest batches. */
  batches: Array<{ id: string; runs: number; started_at: number; tactic_name: string | null }>;
}

/** A run's place in the list: newest first, and among runs started in the same millisecond, the later written first. */
interface Key {
  started_at: number;
  rowid: number;
}

interface Clause {
  sql: string[];
  values: unknown[];
}

// Text columns as blobs, decoded by `decodeRow`: libsql aborts the process on a text that is not UTF-8 (storedRows.ts).
const ROW_COLUMNS =
  "CAST(id AS BLOB) AS id, started_at, CAST(status AS BLOB) AS status, CAST(tactic_name AS BLOB) AS tactic_name, CAST(models AS BLOB) AS models, prompt_tokens, completion_tokens, cost, duration_ms, CAST(batch_id AS BLOB) AS batch_id, CAST(substr(input, 1, 200) AS BLOB) AS input, CAST(test_file AS BLOB) AS test_file, CAST(test_case AS BLOB) AS test_case, CAST(test_status AS BLOB) AS test_status";

/**
 * The viewer's read queries, on a connection of its own. Each filter is a range of one of the indexes of migration
 * 3 (status, tactic, batch, each with started_at), of migration 4 (the test runs) or of `runs_started`, and every value is a bound parameter.
 */
export class ViewerQueries {
  readonly #database: Database;

  constructor(database: Database) {
    this.#database = database;
  }

  close(): void {
    this.#database.close();
  }

  page(request: ViewerPageRequest): ViewerPage {
    const matches = request.search === undefined ? undefined : this.#matches(request.search);
    if (matches === 0) return { runs: [], total: 0, offset: 0 };
    const filter = whereOf(request, searchMode(matches));
    const { runs, from } = this.#pageRows(filter, request);
    // The full-text index counts its own matches at once; with other filters the runs are counted.
    const total = matches !== undefined && filter.sql.length === 1 ? matches : this.#count(filter);
    let offset = from === "oldest" ? total - runs.length : 0;
    if (from === "key") {
      const first = runs[0] && this.#key(runs[0].id);
      offset = first ? this.#count(withClause(filter, newerThan(first))) : total;
    }
    return { runs, total, offset };
  }

  /** The page's rows, and whether it is the newest or the oldest page (so its place needs no counting). */
  #pageRows(filter: Clause, request: ViewerPageRequest): { runs: ViewerRunRow[]; from: "newest" | "oldest" | "key" } {
    const { limit } = request;
    if (request.after === "") return { runs: this.#rows(filter, "ASC", limit).reverse(), from: "oldest" };
    const cursorId = request.before || request.after;
    const cursor = cursorId ? this.#key(cursorId) : undefined;
    if (cursor && request.before) return { runs: this.#rows(withClause(filter, olderThan(cursor)), "DESC", limit), from: "key" };
    if (cursor) {
      const runs = this.#rows(withClause(filter, newerThan(cursor)), "ASC", limit).reverse();
      // Fewer than a page newer than the cursor: that is the newest page, shown whole.
      if (runs.length === limit) return { runs, from: "key" };
    }
    // No cursor, or one that is not in the log: the newest page.
    return { runs: this.#rows(filter, "DESC", limit), from: "newest" };
  }

  facets(): ViewerFacets {
    const tactics = this.#database
      .prepare("SELECT CAST(tactic_name AS BLOB) AS name, count(*) AS runs FROM runs WHERE tactic_name IS NOT NULL GROUP BY tactic_name ORDER BY tactic_name")
      .all()
      .map((entry) => {
        const row = decodeRow(entry);
        return { name: String(row.name), runs: Number(row.runs) };
      });
    const tacticOf = this.#database.prepare("SELECT CAST(tactic_name AS BLOB) FROM runs WHERE batch_id = ? LIMIT 1").raw();
    const batches = this.#database
      .prepare("SELECT CAST(batch_id AS BLOB) AS id, count(*) AS runs, min(started_at) AS started_at FROM runs WHERE batch_id IS NOT NULL GROUP BY batch_id ORDER BY started_at DESC LIMIT 50")
      .all()
      .map((entry) => {
        const row = decodeRow(entry);
        const tactic = scalar(tacticOf.get(row.id));
        return { id: String(row.id), runs: Number(row.runs), started_at: Number(row.started_at), tactic_name: typeof tactic === "string" ? tactic : null };
      });
    return { tactics, batches };
  }

  /** The rows of `EXPLAIN QUERY PLAN` for a page's queries (a test pins that each reads an index). */
  plans(request: ViewerPageRequest): string[] {
    const filter = whereOf(request, searchMode(request.search === undefined ? undefined : this.#matches(request.search)));
    const key = { started_at: 0, rowid: 0 };
    const statements = [listSql(withClause(filter, olderThan(key)), "DESC", request.limit), countSql(withClause(filter, newerThan(key)))];
    return statements.flatMap(({ sql, values }) => this.#database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...values).map((row) => String((row as Record<string, unknown>).detail)));
  }

  /** How many runs hold the words (from the full-text index alone: no run is read). */
  #matches(search: string): number {
    return Number((this.#database.prepare("SELECT count(*) FROM runs_text WHERE runs_text MATCH ?").raw().get(ftsQuery(search)) as unknown[])[0]);
  }

  #key(id: string): Key | undefined {
    const row = this.#database.prepare("SELECT started_at, rowid FROM runs WHERE id = ?").raw().get(id) as [number, number] | undefined;
    return row ? { started_at: Number(row[0]), rowid: Number(row[1]) } : undefined;
  }

  #rows(clause: Clause, order: "ASC" | "DESC", limit: number): ViewerRunRow[] {
    const { sql, values } = listSql(clause, order, limit);
    return this.#database
      .prepare(sql)
      .all(...values)
      .map((row) => toRow(decodeRow(row)));
  }

  #count(clause: Clause): number {
    const { sql, values } = countSql(clause);
    return Number((this.#database.prepare(sql).raw().get(...values) as unknown[])[0]);
  }
}

/**
 * Few matches of a search are best read first and their runs looked up (`drive`); many are best found by reading
 * the runs in list order and keeping those in the set of matches (`probe`: the unary `+` keeps SQLite from driving
 * the query by rowid), which stops as soon as a page is full.
 */
type SearchMode = "drive" | "probe";

const DRIVE_BELOW = 2000;

function searchMode(matches: number | undefined): SearchMode {
  return matches !== undefined && matches >= DRIVE_BELOW ? "probe" : "drive";
}

function whereOf(filter: ViewerFilter, mode: SearchMode): Clause {
  const clause: Clause = { sql: [], values: [] };
  if (filter.status !== undefined) add(clause, "status = ?", filter.status);
  if (filter.tactic !== undefined) add(clause, "tactic_name = ?", filter.tactic);
  if (filter.batch === "none") add(clause, "batch_id IS NULL");
  else if (filter.batch !== undefined) add(clause, "batch_id = ?", filter.batch);
  // `test_file IS NOT NULL` is the condition of the partial index runs_test (migration 4): the test runs alone are read.
  if (filter.test !== undefined) add(clause, "test_file IS NOT NULL");
  if (filter.test === "passed" || filter.test === "failed") add(clause, "test_status = ?", filter.test);
  if (filter.since !== undefined) add(clause, "started_at >= ?", filter.since);
  if (filter.until !== undefined) add(clause, "started_at < ?", filter.until);
  // runs_text's rowid is the run's (migration 3): the matches are read from the full-text index alone.
  if (filter.search !== undefined) add(clause, `${mode === "probe" ? "+" : ""}rowid IN (SELECT rowid FROM runs_text WHERE runs_text MATCH ?)`, ftsQuery(filter.search));
  return clause;
}

function add(clause: Clause, sql: string, ...values: unknown[]): void {
  clause.sql.push(sql);
  clause.values.push(...values);
}

function withClause(base: Clause, extra: Clause): Clause {
  return { sql: [...base.sql, ...extra.sql], values: [...base.values, ...extra.values] };
}

// The list's order is (started_at, rowid), which every index of `runs` holds in that order (SQLite appends the rowid
// to each), so a page is read from an index without sorting; the plain `started_at` bound makes it a range.
function olderThan(key: Key): Clause {
  return { sql: ["started_at <= ? AND (started_at < ? OR rowid < ?)"], values: [key.started_at, key.started_at, key.rowid] };
}

function newerThan(key: Key): Clause {
  return { sql: ["started_at >= ? AND (started_at > ? OR rowid > ?)"], values: [key.started_at, key.started_at, key.rowid] };
}

function whereSql(clause: Clause): string {
  return clause.sql.length > 0 ? `WHERE ${clause.sql.join(" AND ")}` : "";
}

/**
 * The page's rows in two steps: which runs (their keys alone, so sorting the matches of a search moves two numbers
 * per run), then their columns.
 */
function listSql(clause: Clause, order: "ASC" | "DESC", limit: number): { sql: string; values: unknown[] } {
  const orderBy = `ORDER BY started_at ${order}, rowid ${order}`;
  return { sql: `SELECT ${ROW_COLUMNS} FROM runs WHERE rowid IN (SELECT rowid FROM runs ${whereSql(clause)} ${orderBy} LIMIT ?) ${orderBy}`, values: [...clause.values, limit] };
}

function countSql(clause: Clause): { sql: string; values: unknown[] } {
  return { sql: `SELECT count(*) FROM runs ${whereSql(clause)}`, values: clause.values };
}

function toRow(row: Record<string, unknown>): ViewerRunRow {
  let models: string[] = [];
  try {
    models = JSON.parse(String(row.models ?? "[]")) as string[];
  } catch {
    // A row written by a broken process: show it without its models.
  }
  return {
    id: String(row.id),
    started_at: Number(row.started_at),
    status: String(row.status) as RunStatus,
    tactic_name: typeof row.tactic_name === "string" ? row.tactic_name : null,
    models,
    prompt_tokens: Number(row.prompt_tokens ?? 0),
    completion_tokens: Number(row.completion_tokens ?? 0),
    cost: typeof row.cost === "number" ? row.cost : null,
    duration_ms: row.duration_ms === null || row.duration_ms === undefined ? null : Number(row.duration_ms),
    batch_id: typeof row.batch_id === "string" ? row.batch_id : null,
    input: typeof row.input === "string" ? row.input : null,
    test_file: typeof row.test_file === "string" ? row.test_file : null,
    test_case: typeof row.test_case === "string" ? row.test_case : null,
    test_status: row.test_status === "passed" || row.test_status === "failed" ? row.test_status : null,
  };
}
