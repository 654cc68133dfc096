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
  // 3: the test case a run is (`lllm test`): its test file and the case's name.
  `ALTER TABLE runs ADD COLUMN test_file TEXT; ALTER TABLE runs ADD COLUMN test_case TEXT;`,
];
