import { startNote, type ToolOutcome, type ToolStartNote } from "../../store/journal/ToolJournal.js";
import type Libsql from "libsql";
import { openDatabaseSync, type Database } from "../../store/openDatabase.js";
import { StoreError } from "../../store/StoreError.js";
import type { BatchJobState } from "./BatchApi.js";
import type { ParkedEntry, ParkedStorage } from "../ParkedItems.js";
import type { ItemHistory, KnownRequest, StoredAnswer } from "./ItemHistory.js";

/** A provider job of a batch, as kept in the run store. */
export interface StoredJob {
  jobId: string;
  provider: string;
  /** The agent's model settings the job's requests were made for (JSON; no key: keys come from the environment). */
  config: string;
  /**
   * `submitting`: recorded before the provider was asked; its `jobId` is then the submission key. `cancelling`:
   * running, and cancelled by `lllm batch --cancel` (a running batch that sees it stops).
   */
  state: BatchJobState | "submitting" | "cancelling";
  providerState: string | null;
  requests: number;
  /** The estimated cost of the job's requests, counted by --max-cost as spent from submission on. */
  committedCost: number;
  submittedAt: number;
  endedAt: number | null;
}

export type { StoredAnswer } from "./ItemHistory.js";

type Statement = Libsql.Statement<unknown[]>;

/** Waiting requests of a batch group that go into one job (`BatchJobStore.waiting`). */
export interface WaitingRange {
  first: string;
  last: string;
  count: number;
  bytes: number;
}

/**
 * Where `lllm batch --provider-batch` keeps its provider jobs and each request's state and answer (the run store,
 * tables of migration 5), keyed by the absolute path of the --out file: running the same command again finds the
 * jobs to poll and the answers to replay, instead of submitting again.
 */
export class BatchJobStore implements ParkedStorage {
  readonly #database: Database;
  readonly #out: string;
  /** Statements prepared once: an item's requests and tool calls are read and written thousands of times a round. */
  readonly #statements = new Map<string, Statement>();
  /** The order parked items became ready in (`markReady`). */
  #readySeq = 0;
  /** Tool outcomes not yet written (`keepToolResult`). */
  #pendingTools = new Map<string, string>();
  #toolsTimer: NodeJS.Timeout | undefined;
  /**
   * The store held no request and no tool outcome of this --out file when it was opened: an item's first attempt
   * then has nothing to read back (`historyOf` is not asked).
   */
  readonly startedEmpty: boolean;

  private constructor(database: Database, out: string) {
    this.#database = database;
    this.#out = out;
    const row = database.prepare("SELECT EXISTS (SELECT 1 FROM provider_batch_requests WHERE out = ?1) OR EXISTS (SELECT 1 FROM provider_batch_tool_results WHERE out = ?1)").raw().get(out) as [number];
    this.startedEmpty = Number(row[0]) === 0;
  }

  /**
   * How many of this --out file's requests an lllm before request digests named (`<item>-<turn>`): this one asks them
   * again under their new names (see `requestIds`), and their answers are not used.
   */
  requestsNamedByTurn(): number {
    if (this.startedEmpty) return 0;
    const row = this.#database.prepare("SELECT COUNT(*) FROM provider_batch_requests WHERE out = ? AND custom_id NOT GLOB '*-*-*'").raw().get(this.#out) as [number];
    return Number(row[0]);
  }

  static open(file: string, out: string): BatchJobStore {
    const { database, readOnly } = openDatabaseSync(file);
    if (readOnly !== undefined) {
      database.close();
      throw new StoreError("store_read_only", `--provider-batch keeps its jobs in the run store, which cannot be written: ${readOnly}`, { hint: "make the file writable, or set LLLM_HOME to another folder" });
    }
    return new BatchJobStore(database, out);
  }

  close(): void {
    this.#flushTools();
    this.#database.close();
  }

  jobs(): StoredJob[] {
    const rows = this.#database.prepare("SELECT job_id, provider, config, state, provider_state, requests, committed_cost, submitted_at, ended_at FROM provider_batch_jobs WHERE out = ? ORDER BY submitted_at, rowid").raw().all(this.#out) as unknown[][];
    return rows.map(([jobId, provider, config, state, providerState, requests, committedCost, submittedAt, endedAt]) => ({
      jobId: String(jobId),
      provider: String(provider),
      config: String(config),
      state: state as StoredJob["state"],
      providerState: providerState === null ? null : String(providerState),
      requests: Number(requests),
      committedCost: Number(committedCost),
      submittedAt: Number(submittedAt),
      endedAt: endedAt === null ? null : Number(endedAt),
    }));
  }

  /**
   * Record a job about to be submitted, under its submission key, with its requests marked as in it: killed before
   * the job's id is known, the next run asks the provider for the key (`BatchApi.find`) instead of submitting again.
   */
  addSubmission(job: Omit<StoredJob, "jobId" | "state" | "providerState" | "endedAt">, submission: string, customIds: readonly string[]): void {
    this.addJob({ ...job, jobId: submission }, customIds, "submitting");
  }

  /** The submission got its id from the provider (or was found again under its key). */
  submitted(submission: string, jobId: string): void {
    this.#transaction(() => {
      this.#database.prepare("UPDATE provider_batch_jobs SET job_id = ?, state = 'running' WHERE out = ? AND job_id = ?").run(jobId, this.#out, submission);
      this.#database.prepare("UPDATE provider_batch_requests SET job_id = ? WHERE out = ? AND job_id = ?").run(jobId, this.#out, submission);
    });
  }

  /** The submission never reached the provider: forget it (its requests are submitted again, not counted as tried). */
  dropSubmission(submission: string): void {
    this.#transaction(() => {
      this.#database.prepare("UPDATE provider_batch_requests SET job_id = NULL, attempts = attempts - 1 WHERE out = ? AND job_id = ?").run(this.#out, submission);
      this.#database.prepare("DELETE FROM provider_batch_jobs WHERE out = ? AND job_id = ?").run(this.#out, submission);
    });
  }

  /** Record a submitted job and mark its requests as in it (one transaction: a kill leaves both or neither). */
  addJob(job: Omit<StoredJob, "state" | "providerState" | "endedAt">, customIds: readonly string[], state: "running" | "submitting" = "running"): void {
    this.#transaction(() => {
      this.#insertJob(job, state);
      const mark = this.#database.prepare("INSERT INTO provider_batch_requests (out, custom_id, job_id, attempts) VALUES (?, ?, ?, 1) ON CONFLICT (out, custom_id) DO UPDATE SET job_id = excluded.job_id, attempts = attempts + 1");
      for (const id of customIds) mark.run(this.#out, id, job.jobId);
    });
  }

  #insertJob(job: Omit<StoredJob, "state" | "providerState" | "endedAt">, state: "running" | "submitting"): void {
    this.#database.prepare("INSERT INTO provider_batch_jobs (out, job_id, provider, config, state, requests, committed_cost, submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)").run(this.#out, job.jobId, job.provider, job.config, state, job.requests, job.committedCost, job.submittedAt);
  }

  /** A job's state as the provider says it; a job cancelled by `--cancel` stays `cancelling` until it ends. */
  setJobState(jobId: string, state: BatchJobState, providerState: string): void {
    this.#database
      .prepare("UPDATE provider_batch_jobs SET state = CASE WHEN ?1 = 'running' AND state = 'cancelling' THEN state ELSE ?1 END, provider_state = ?2, ended_at = CASE WHEN ?1 = 'running' THEN NULL ELSE ?3 END WHERE out = ?4 AND job_id = ?5")
      .run(state, providerState, Date.now(), this.#out, jobId);
  }

  /** `lllm batch --cancel` asked the provider to cancel a running job: it is final for a batch running now. */
  cancelRequested(jobId: string, providerState: string): void {
    this.#database.prepare("UPDATE provider_batch_jobs SET state = 'cancelling', provider_state = ? WHERE out = ? AND job_id = ? AND state IN ('running', 'cancelling')").run(providerState, this.#out, jobId);
  }

  /** Whether `lllm batch --cancel` cancelled this job (see `cancelRequested`). */
  isCancelling(jobId: string): boolean {
    return this.#prepare("SELECT 1 FROM provider_batch_jobs WHERE out = ? AND job_id = ? AND state = 'cancelling'").raw().get(this.#out, jobId) !== undefined;
  }

  /**
   * End a job (its answers are stored already, by `saveAnswers`): free its requests without one, to be submitted
   * again. Those whose body is kept wait again (`waiting`), in batch group `group`.
   */
  endJob(jobId: string, state: BatchJobState, providerState: string, group?: number): void {
    this.#transaction(() => {
      this.#database.prepare("UPDATE provider_batch_requests SET job_id = NULL, grp = CASE WHEN body IS NULL THEN grp ELSE ? END WHERE out = ? AND job_id = ?").run(group ?? null, this.#out, jobId);
      this.setJobState(jobId, state, providerState);
    });
  }

  /**
   * Store answers of job `jobId` as they are read (the job itself ends with `endJob`). Returns the ids answered now:
   * not those of another job, unknown, or answered already (the job's results read again after a failure).
   */
  saveAnswers(jobId: string, answers: ReadonlyMap<string, StoredAnswer>): string[] {
    const saved: string[] = [];
    this.#transaction(() => {
      const save = this.#prepare("UPDATE provider_batch_requests SET answer = ?, job_id = NULL, body = NULL, grp = NULL, bytes = NULL WHERE out = ? AND custom_id = ? AND job_id = ?");
      for (const [id, answer] of answers) if (save.run(JSON.stringify(answer), this.#out, id, jobId).changes > 0) saved.push(id);
    });
    return saved;
  }

  /** A request's answer, its pending job, and how many times it was submitted. */
  request(customId: string): KnownRequest | undefined {
    const row = this.#prepare("SELECT answer, job_id, attempts FROM provider_batch_requests WHERE out = ? AND custom_id = ?").raw().get(this.#out, customId) as [string | null, string | null, number] | undefined;
    return row ? knownRequest(...row) : undefined;
  }

  /**
   * Keep the bodies of requests waiting to be submitted (one transaction for many), in their batch group (a number
   * the running lllm gives each): an item waiting for its answer is not in memory, and neither is its request,
   * before, during or after its job. They wait (`waiting`) until a job takes them (`addWaitingSubmission`).
   */
  keepBodies(requests: ReadonlyArray<{ customId: string; body: string; bytes: number; group: number }>): void {
    if (requests.length === 0) return;
    // A request carries its item's tool results: they are kept first. Else a kill could leave a job at the provider
    // with a result that a rerun, running the tool again, might not give, and its answer would follow another history.
    this.#flushTools();
    this.#transaction(() => {
      const keep = this.#prepare("INSERT INTO provider_batch_requests (out, custom_id, body, bytes, grp) VALUES (?, ?, ?, ?, ?) ON CONFLICT (out, custom_id) DO UPDATE SET body = excluded.body, bytes = excluded.bytes, grp = excluded.grp");
      for (const request of requests) keep.run(this.#out, request.customId, request.body, request.bytes, request.group);
    });
  }

  /**
   * The requests of batch group `group` waiting for a job, cut into jobs of at most `maxRequests` requests and
   * `maxBytes` bytes (each request counted `overhead` bytes more): each as its first and last custom id (in order),
   * how many, and their bytes. Reads the waiting ids once; keeps none.
   */
  waiting(group: number, limits: { maxRequests: number; maxBytes: number; overhead: number }): WaitingRange[] {
    const ranges: WaitingRange[] = [];
    let current: WaitingRange | undefined;
    const rows = this.#prepare("SELECT custom_id, bytes FROM provider_batch_requests WHERE out = ? AND grp = ? AND job_id IS NULL AND body IS NOT NULL ORDER BY custom_id").raw().iterate(this.#out, group) as Iterable<[string, number | null]>;
    for (const [customId, stored] of rows) {
      const bytes = Number(stored ?? 0) + limits.overhead;
      if (current && (current.count >= limits.maxRequests || current.bytes + bytes > limits.maxBytes)) current = undefined;
      if (!current) ranges.push((current = { first: customId, last: customId, count: 0, bytes: 0 }));
      current.last = customId;
      current.count += 1;
      current.bytes += bytes;
    }
    return ranges;
  }

  /**
   * Record a job about to be submitted (as `addSubmission`) for the waiting requests of `group` from `range.first`
   * to `range.last`, marked as in it. Returns how many were marked.
   */
  addWaitingSubmission(job: Omit<StoredJob, "jobId" | "state" | "providerState" | "endedAt">, submission: string, group: number, range: WaitingRange): number {
    let marked = 0;
    this.#transaction(() => {
      this.#insertJob({ ...job, jobId: submission }, "submitting");
      marked = this.#prepare("UPDATE provider_batch_requests SET job_id = ?, attempts = attempts + 1 WHERE out = ? AND grp = ? AND job_id IS NULL AND body IS NOT NULL AND custom_id >= ? AND custom_id <= ?").run(submission, this.#out, group, range.first, range.last).changes;
    });
    return marked;
  }

  /** The kept bodies of a job's requests (JSON), in custom id order, `limit` after `after`. */
  bodiesOf(jobId: string, after: string, limit: number): Array<[customId: string, body: string]> {
    return this.#prepare("SELECT custom_id, body FROM provider_batch_requests WHERE out = ? AND job_id = ? AND custom_id > ? AND body IS NOT NULL ORDER BY custom_id LIMIT ?").raw().all(this.#out, jobId, after, limit) as Array<[string, string]>;
  }

  /** The body of a request kept by `keepBodies` (JSON), until its answer is stored. */
  body(customId: string): string | undefined {
    const row = this.#prepare("SELECT body FROM provider_batch_requests WHERE out = ? AND custom_id = ?").raw().get(this.#out, customId) as [string | null] | undefined;
    return row?.[0] ?? undefined;
  }

  /** Give a request up: the item reads the reason as its answer, and fails. */
  giveUp(customId: string, reason: string): void {
    this.#database.prepare("INSERT INTO provider_batch_requests (out, custom_id, answer) VALUES (?, ?, ?) ON CONFLICT (out, custom_id) DO UPDATE SET answer = excluded.answer, job_id = NULL, body = NULL, grp = NULL, bytes = NULL").run(this.#out, customId, JSON.stringify({ failed: reason } satisfies StoredAnswer));
  }

  /** Parked items (see `ParkedItems`): an item waiting for its answer is a row, not memory. */
  park(entries: ReadonlyArray<{ key: string; entry: ParkedEntry }>): void {
    this.#transaction(() => {
      const add = this.#prepare("INSERT OR REPLACE INTO provider_batch_parked (out, item_key, entry, ready_seq) VALUES (?, ?, ?, NULL)");
      for (const { key, entry } of entries) add.run(this.#out, key, JSON.stringify({ ...entry, history: undefined }));
    });
  }

  markReady(keys: readonly string[]): string[] {
    const marked: string[] = [];
    this.#transaction(() => {
      const mark = this.#prepare("UPDATE provider_batch_parked SET ready_seq = ? WHERE out = ? AND item_key = ? AND ready_seq IS NULL");
      for (const key of keys) {
        this.#readySeq += 1;
        if (mark.run(this.#readySeq, this.#out, key).changes > 0) marked.push(key);
      }
    });
    return marked;
  }

  /**
   * Up to `limit` ready items, the first made ready first, each with its history (`ItemHistory`): a few queries for
   * the whole chunk, not a few per item.
   */
  takeReady(limit: number): ParkedEntry[] {
    this.#flushTools();
    const taken: ParkedEntry[] = [];
    this.#transaction(() => {
      const rows = this.#prepare("SELECT item_key, entry, ready_seq FROM provider_batch_parked WHERE out = ? AND ready_seq IS NOT NULL ORDER BY ready_seq LIMIT ?").raw().all(this.#out, limit) as Array<[string, string, number]>;
      if (rows.length === 0) return;
      // Ready items are numbered in order (`markReady`): these are all of them up to the last one's number.
      const last = rows[rows.length - 1]![2];
      const histories = new Map<string, { requests: Map<string, KnownRequest>; tools: Map<string, string> }>();
      for (const [key] of rows) histories.set(key, { requests: new Map(), tools: new Map() });
      const requests = this.#prepare(`SELECT p.item_key, r.custom_id, r.answer, r.job_id, r.attempts FROM provider_batch_parked p JOIN provider_batch_requests r ON r.out = p.out AND r.custom_id > p.item_key || '-' AND r.custom_id < p.item_key || '.' WHERE p.out = ? AND p.ready_seq IS NOT NULL AND p.ready_seq <= ?`);
      for (const [key, customId, answer, jobId, attempts] of requests.raw().iterate(this.#out, last) as Iterable<[string, string, string | null, string | null, number]>) {
        histories.get(key)?.requests.set(customId, knownRequest(answer, jobId, attempts));
      }
      const tools = this.#prepare(`SELECT p.item_key, t.key, t.result FROM provider_batch_parked p JOIN provider_batch_tool_results t ON t.out = p.out AND t.key > p.item_key || '/' AND t.key < p.item_key || '0' WHERE p.out = ? AND p.ready_seq IS NOT NULL AND p.ready_seq <= ?`);
      for (const [key, toolKey, result] of tools.raw().iterate(this.#out, last) as Iterable<[string, string, string]>) histories.get(key)?.tools.set(toolKey, result);
      this.#prepare("DELETE FROM provider_batch_parked WHERE out = ? AND ready_seq IS NOT NULL AND ready_seq <= ?").run(this.#out, last);
      for (const [key, entry] of rows) taken.push({ ...(JSON.parse(entry) as ParkedEntry), history: histories.get(key)! });
    });
    return taken;
  }

  /** What the store knows of one item (`ItemHistory`): two queries. */
  historyOf(itemKey: string): ItemHistory {
    const rows = this.#prepare("SELECT custom_id, answer, job_id, attempts FROM provider_batch_requests WHERE out = ? AND custom_id > ? AND custom_id < ?").raw().all(this.#out, `${itemKey}-`, `${itemKey}.`) as Array<[string, string | null, string | null, number]>;
    return { requests: new Map(rows.map(([customId, answer, jobId, attempts]) => [customId, knownRequest(answer, jobId, attempts)])), tools: this.toolResultsOf(itemKey) };
  }

  /**
   * Forget the parked items of an earlier run, and the bodies of their requests that wait for no job (a rerun runs
   * every unfinished item from the dataset again: they park again, in this run's batch groups).
   */
  clearParked(): void {
    this.#transaction(() => {
      this.#database.prepare("DELETE FROM provider_batch_parked WHERE out = ?").run(this.#out);
      this.#database.prepare("UPDATE provider_batch_requests SET body = NULL, grp = NULL, bytes = NULL WHERE out = ? AND job_id IS NULL AND body IS NOT NULL").run(this.#out);
    });
  }

  /** The outcomes of an item's tool calls (see `ToolJournal`; their keys start with the item's key and a slash), as JSON. */
  toolResultsOf(itemKey: string): Map<string, string> {
    const rows = this.#prepare("SELECT key, result FROM provider_batch_tool_results WHERE out = ? AND key > ? AND key < ?").raw().all(this.#out, `${itemKey}/`, `${itemKey}0`) as Array<[string, string]>;
    const found = new Map(rows);
    for (const [key, outcome] of this.#pendingTools) if (key.startsWith(`${itemKey}/`)) found.set(key, outcome);
    return found;
  }

  /**
   * Note that a call starts, on disk before it runs (with the outcomes waiting to be written): an item run again after
   * a kill during the call knows it was cut short, and runs it again only when its tool says that is safe.
   */
  keepToolStart(key: string, note: ToolStartNote): void {
    const pending = this.#pendingTools;
    this.#pendingTools = new Map();
    clearTimeout(this.#toolsTimer);
    this.#toolsTimer = undefined;
    this.#transaction(() => {
      const keep = this.#prepare("INSERT OR REPLACE INTO provider_batch_tool_results (out, key, result) VALUES (?, ?, ?)");
      for (const [pendingKey, outcome] of pending) keep.run(this.#out, pendingKey, outcome);
      this.#prepare("INSERT OR IGNORE INTO provider_batch_tool_results (out, key, result) VALUES (?, ?, ?)").run(this.#out, key, startNote(note));
    });
  }

  /** Write the outcomes waiting (before the item's next model request, which depends on them). */
  flushToolResults(): void {
    this.#flushTools();
  }

  /**
   * Keep a call's outcome: written with others a moment later, in one transaction, and at the latest before the
   * item's next model request or call (a kill before that leaves the call noted as started: see `keepToolStart`).
   */
  keepToolResult(key: string, outcome: ToolOutcome): void {
    this.#pendingTools.set(key, JSON.stringify(outcome));
    if (this.#pendingTools.size >= 200) this.#flushTools();
    else this.#toolsTimer ??= setTimeout(() => this.#flushTools(), 50).unref();
  }

  #flushTools(): void {
    clearTimeout(this.#toolsTimer);
    this.#toolsTimer = undefined;
    if (this.#pendingTools.size === 0) return;
    const pending = this.#pendingTools;
    this.#pendingTools = new Map();
    this.#transaction(() => {
      const keep = this.#prepare("INSERT OR REPLACE INTO provider_batch_tool_results (out, key, result) VALUES (?, ?, ?)");
      for (const [key, outcome] of pending) keep.run(this.#out, key, outcome);
    });
  }

  /** The requests still in a job: its custom ids. */
  requestsOf(jobId: string): string[] {
    return (this.#database.prepare("SELECT custom_id FROM provider_batch_requests WHERE out = ? AND job_id = ?").raw().all(this.#out, jobId) as unknown[][]).map((row) => String(row[0]));
  }

  /** Drop the stored answers once every item has its result line (the jobs stay, for --status). */
  forgetAnswers(): void {
    this.#database.prepare("DELETE FROM provider_batch_requests WHERE out = ? AND job_id IS NULL").run(this.#out);
    this.#database.prepare("DELETE FROM provider_batch_tool_results WHERE out = ?").run(this.#out);
  }

  #prepare(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (!statement) this.#statements.set(sql, (statement = this.#database.prepare(sql)));
    return statement;
  }

  #transaction(body: () => void): void {
    this.#database.exec("BEGIN IMMEDIATE");
    try {
      body();
      this.#database.exec("COMMIT");
    } catch (error) {
      this.#database.exec("ROLLBACK");
      throw error;
    }
  }
}

function knownRequest(answer: string | null, jobId: string | null, attempts: number): KnownRequest {
  return { ...(answer !== null ? { answer: JSON.parse(answer) as StoredAnswer } : {}), ...(jobId !== null ? { jobId } : {}), attempts: Number(attempts) };
}
