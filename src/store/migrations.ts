/**
 * The store's schema, one migration per version, applied in order; `PRAGMA user_version` holds the version a
 * database is at. Never edit a migration that has shipped: add the next one.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    started_at INTEGER NOT NULL,
    ended_at INTEGER,
    status TEXT NOT NULL,
    exit_code INTEGER,
    error_code TEXT,
    error_message TEXT,
    tactic_path TEXT,
    tactic_name TEXT,
    config_digest TEXT,
    input TEXT,
    vars TEXT,
    output TEXT,
    details TEXT,
    models TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    cached_prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    llm_calls INTEGER NOT NULL DEFAULT 0,
    cost REAL,
    duration_ms INTEGER,
    lllm_version TEXT,
    parent_run TEXT,
    continues_run TEXT,
    batch_id TEXT,
    pid INTEGER,
    host TEXT,
    cwd TEXT
  );
  CREATE INDEX runs_started ON runs (started_at);
  CREATE TABLE model_calls (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    step INTEGER NOT NULL,
    agent TEXT NOT NULL,
    round INTEGER NOT NULL,
    model TEXT,
    started_at INTEGER NOT NULL,
    latency_ms INTEGER,
    messages_kept INTEGER NOT NULL DEFAULT 0,
    messages TEXT NOT NULL,
    tools TEXT NOT NULL,
    reply TEXT,
    tool_calls TEXT NOT NULL,
    finish_reason TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    cached_prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL,
    PRIMARY KEY (run_id, seq)
  );
  CREATE TABLE tool_calls (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    step INTEGER NOT NULL,
    agent TEXT NOT NULL,
    call_id TEXT,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    result TEXT,
    status TEXT NOT NULL,
    error TEXT,
    duration_ms INTEGER,
    ended_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
  );
  CREATE VIRTUAL TABLE runs_text USING fts5 (run_id UNINDEXED, input, output);
  `,
  // 2: the failed attempts before a model call's answer ([{attempt, cause, wait_ms}]).
  `ALTER TABLE model_calls ADD COLUMN retries TEXT NOT NULL DEFAULT '[]';`,
  // 3: the viewer's filters, each an index range in started_at order, so a page of a 100,000-run store is read
  // from an index, never from a scan of the table (and markCrashed finds the running runs by status); the tactic
  // and batch indexes hold the status too, so a tactic or batch with a status is counted from the index alone. The
  // full-text rows take their run's rowid, so a search's matches join the runs without reading the text table.
  `CREATE INDEX runs_status ON runs (status, started_at);
  CREATE INDEX runs_tactic ON runs (tactic_name, started_at, status);
  CREATE INDEX runs_batch ON runs (batch_id, started_at, status);
  CREATE VIRTUAL TABLE runs_text_by_run USING fts5 (run_id UNINDEXED, input, output);
  INSERT OR REPLACE INTO runs_text_by_run (rowid, run_id, input, output)
    SELECT runs.rowid, runs_text.run_id, runs_text.input, runs_text.output FROM runs_text JOIN runs ON runs.id = runs_text.run_id;
  DROP TABLE runs_text;
  ALTER TABLE runs_text_by_run RENAME TO runs_text;`,
  // 4: the test case a run is (`lllm test`): its test file, the case's name, and whether the case passed (`passed`,
  // `failed`; null until it is decided); the viewer lists the test runs from an index of them alone.
  `ALTER TABLE runs ADD COLUMN test_file TEXT;
  ALTER TABLE runs ADD COLUMN test_case TEXT;
  ALTER TABLE runs ADD COLUMN test_status TEXT;
  CREATE INDEX runs_test ON runs (started_at) WHERE test_file IS NOT NULL;`,
  // 5 (after the 4th of `lllm test`): `lllm batch --provider-batch`, keyed by the absolute path of the --out file:
  // the provider jobs of a batch and, per model request (its custom id: item and turn), the job it is in, how many
  // times it was submitted, and its answer once the job ended (a resumed item replays its answered turns from here).
  `CREATE TABLE provider_batch_jobs (
    out TEXT NOT NULL,
    job_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    config TEXT NOT NULL,
    state TEXT NOT NULL,
    provider_state TEXT,
    requests INTEGER NOT NULL,
    committed_cost REAL NOT NULL DEFAULT 0,
    submitted_at INTEGER NOT NULL,
    ended_at INTEGER,
    PRIMARY KEY (out, job_id)
  );
  CREATE TABLE provider_batch_requests (
    out TEXT NOT NULL,
    custom_id TEXT NOT NULL,
    job_id TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    answer TEXT,
    PRIMARY KEY (out, custom_id)
  );`,
  // 6: an item waiting for a provider batch job is kept as data, not as a suspended run: its request body waits
  // here until the job is submitted (and for a resubmission), and the results of the tool calls it made are kept,
  // so that running it again from its start when its answer comes (or after a kill) replays them instead of running
  // them twice.
  `ALTER TABLE provider_batch_requests ADD COLUMN body TEXT;
  CREATE TABLE provider_batch_tool_results (
    out TEXT NOT NULL,
    key TEXT NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (out, key)
  );
  CREATE TABLE provider_batch_parked (
    out TEXT NOT NULL,
    item_key TEXT NOT NULL,
    entry TEXT NOT NULL,
    ready_seq INTEGER,
    PRIMARY KEY (out, item_key)
  );
  CREATE INDEX provider_batch_parked_ready ON provider_batch_parked (out, ready_seq) WHERE ready_seq IS NOT NULL;`,
  // 7: the requests of parked items wait for their job here, not in memory: `grp` is the batch group (of the running
  // lllm) a waiting body belongs to, `bytes` its size (jobs are cut at the provider's limits). A job's requests and
  // the waiting ones are found through indexes, not by reading every request of the batch (at 100,000 items, a scan
  // of 300,000 rows each time a job was submitted or ended).
  `ALTER TABLE provider_batch_requests ADD COLUMN grp INTEGER;
  ALTER TABLE provider_batch_requests ADD COLUMN bytes INTEGER;
  CREATE INDEX provider_batch_requests_job ON provider_batch_requests (out, job_id, custom_id) WHERE job_id IS NOT NULL;
  CREATE INDEX provider_batch_requests_waiting ON provider_batch_requests (out, grp, custom_id, bytes) WHERE job_id IS NULL AND body IS NOT NULL;`,
  // 8: `lllm serve`: how a served run was asked for (`served`, JSON: the route, the model, the client, the response and
  // conversation ids), listed by `lllm logs --served` from an index of them alone; and the Responses API's responses
  // (`previous_response_id`, `GET /v1/responses/{id}`), each the wire object as it was sent, with its run.
  `ALTER TABLE runs ADD COLUMN served TEXT;
  CREATE INDEX runs_served ON runs (started_at) WHERE served IS NOT NULL;
  CREATE TABLE served_responses (
    id TEXT PRIMARY KEY,
    run_id TEXT,
    created_at INTEGER NOT NULL,
    body TEXT NOT NULL,
    history TEXT
  );`,
  // 9: `lllm serve`'s A2A tasks (`tasks/get` after a restart): each the task as last saved (JSON, ProtoJSON of
  // A2A 1.0), its context and the run that carries it.
  `CREATE TABLE a2a_tasks (
    id TEXT PRIMARY KEY,
    context_id TEXT NOT NULL,
    run_id TEXT,
    updated_at INTEGER NOT NULL,
    body TEXT NOT NULL
  );`,
  // 10: durable runs (`lllm run --resume`). `runs.resume`: what a resume needs besides the input (the run's flags, and
  // the digests of its tactic, prompts and tools, to refuse a changed one); `runs.batch_item`: the batch item a run
  // is (its --out file and id), so that a batch run again resumes the item's run. `tool_journal`: each tool call
  // of the run as it starts (with whether it is safe to run again) and its outcome once it ends, by the call's key
  // (agent, call id, occurrence): what a resume answers a call from, or knows it was cut short. `run_attempts`: the
  // attempts after the first, and where each began (the viewer marks it). The model calls keep the rest of their
  // usage, so that a replayed answer is priced as it was.
  `ALTER TABLE runs ADD COLUMN resume TEXT;
  ALTER TABLE runs ADD COLUMN batch_item TEXT;
  CREATE INDEX runs_batch_item ON runs (batch_item, started_at) WHERE batch_item IS NOT NULL;
  ALTER TABLE model_calls ADD COLUMN cache_write_prompt_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE model_calls ADD COLUMN batch INTEGER NOT NULL DEFAULT 0;
  CREATE TABLE tool_journal (
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    agent TEXT NOT NULL,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    rerun TEXT,
    started_at INTEGER NOT NULL,
    outcome TEXT,
    ended_at INTEGER,
    PRIMARY KEY (run_id, key)
  );
  CREATE TABLE run_attempts (
    run_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    pid INTEGER,
    host TEXT,
    model_seq INTEGER NOT NULL,
    tool_seq INTEGER NOT NULL,
    step INTEGER NOT NULL,
    PRIMARY KEY (run_id, attempt)
  );`,
  // 11: what a provider wants back with an answer's tool calls (Gemini's call parts with their thought signatures,
  // Anthropic's thinking blocks), as JSON: a resumed run sends it as the first attempt's live model would have.
  `ALTER TABLE model_calls ADD COLUMN carry TEXT;`,
  // 12: what the attempts before each attempt took: a run's time across crashes is the last one's figure plus its own.
  `ALTER TABLE run_attempts ADD COLUMN earlier_ms INTEGER;`,
  // 13: the model call whose answer ended the run before this attempt, which it asked for again (see endingAnswer):
  // a later attempt must not replay that answer either.
  `ALTER TABLE run_attempts ADD COLUMN asked_again INTEGER;`,
];
