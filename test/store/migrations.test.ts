import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { RunSpool } from "../../src/store/RunSpool.js";
import { RunStore } from "../../src/store/RunStore.js";
import { tempDir } from "../helpers/tempTree.js";

const Libsql = createRequire(import.meta.url)("libsql") as typeof import("libsql");

describe("the store's migrations", () => {
  it.each([2, 3])("bring a store written by an older lllm (schema %i) up to date, keeping its runs; runs then record their test case", (version) => {
    const file = path.join(tempDir(), "logs.db");
    const old = new Libsql(file);
    for (const migration of MIGRATIONS.slice(0, version)) old.exec(migration);
    old.pragma(`user_version = ${version}`);
    old.prepare("INSERT INTO runs (id, started_at, status, tactic_name) VALUES ('01OLDRUN', 1, 'ok', 'weather')").run();
    old.close();

    const store = RunStore.openSync(file);
    try {
      expect(store.listRuns()).toEqual([expect.objectContaining({ id: "01OLDRUN", tactic_name: "weather", test_file: null, test_case: null, resumable: false })]);
      // A test case's run, recorded as a process records it (its spool), then its outcome; merged by the next read.
      const spool = RunSpool.of(file);
      spool.append({ begin: { id: "01NEWRUN", startedAt: 2, tacticPath: "/t/weather.yaml", tacticName: "weather", configDigest: "d", input: "hi", vars: {}, models: [], lllmVersion: "0", test: { file: "/t/tests/weather.test.yaml", case: "two cities" } } }, { now: false });
      spool.append({ test: { runs: ["01NEWRUN"], status: "failed" } }, { now: true });
      expect(store.getRun("01NEWRUN")).toMatchObject({ test_file: "/t/tests/weather.test.yaml", test_case: "two cities", test_status: "failed" });
      expect(store.getRun("01OLDRUN")).toMatchObject({ test_file: null, test_case: null, test_status: null });
    } finally {
      store.close();
    }
    const reopened = new Libsql(file);
    expect(reopened.prepare("PRAGMA user_version").raw().get()).toEqual([MIGRATIONS.length]);
    expect(MIGRATIONS).toHaveLength(13); // 13: which answer a resumed attempt asked for again; 4: lllm test's columns, 5: --provider-batch's jobs and requests, 6: their bodies and tool results, 7: requests waiting in the store, and by job, 8: lllm serve's runs and responses, 9: its A2A tasks, 10: durable runs' journal, 11: what a provider wants back with an answer's tool calls, 12: each attempt's time before it
    // The provider-batch tables exist too after an upgrade.
    expect(reopened.prepare("SELECT count(*) FROM provider_batch_jobs").raw().get()).toEqual([0]);
    expect(reopened.prepare("SELECT count(*) FROM provider_batch_tool_results").raw().get()).toEqual([0]);
    // So do lllm serve's: how a run was asked for, and the Responses API's responses.
    expect(reopened.prepare("SELECT count(*) FROM runs WHERE served IS NOT NULL").raw().get()).toEqual([0]);
    expect(reopened.prepare("SELECT count(*) FROM served_responses").raw().get()).toEqual([0]);
    expect(reopened.prepare("SELECT count(*) FROM a2a_tasks").raw().get()).toEqual([0]);
    // So do the journal's: an old run reads as one recorded without it (not resumable).
    expect(reopened.prepare("SELECT count(*) FROM tool_journal").raw().get()).toEqual([0]);
    expect(reopened.prepare("SELECT count(*) FROM run_attempts").raw().get()).toEqual([0]);
    reopened.close();
  });
});
