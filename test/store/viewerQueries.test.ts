import { createRequire } from "node:module";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { openDatabaseSync } from "../../src/store/openDatabase.js";
import { pageRequest } from "../../src/store/viewer/serveViewer.js";
import { ViewerQueries, type ViewerFilter, type ViewerPageRequest } from "../../src/store/viewer/viewerQueries.js";
import { tempDir } from "../helpers/tempTree.js";
import { seedRuns, type SeedRun } from "./storeTestHelpers.js";

let queries: ViewerQueries | undefined;
afterEach(() => {
  queries?.close();
  queries = undefined;
});

const BASE = Date.UTC(2026, 0, 1);
const COUNT = 3000;

/** Runs of three tactics, a few failures, two batches and runs outside any, and pairs started in the same millisecond. */
function specs(): SeedRun[] {
  return Array.from({ length: COUNT }, (_, index) => ({
    startedAt: BASE + Math.floor(index / 2) * 1000 + (index % 10 < 2 ? 0 : index % 2),
    tactic: ["alpha", "beta", "gamma"][index % 3]!,
    status: index % 20 === 0 ? "error" : index % 47 === 0 ? "budget" : "ok",
    ...(index % 4 === 0 ? {} : { batchId: index < COUNT / 2 ? "BATCHA" : "BATCHB" }),
    input: `question ${index} about ${index % 7 === 0 ? "Oslo" : "Paris"}`,
    ...(index % 13 === 0 ? { test: { file: "/p/tests/w.test.yaml", case: `case ${index}`, status: index % 26 === 0 ? "failed" : "passed" } } : {}),
  }));
}

/** Every page of the list, newest first, following `before` from the first page; checks each page's position. */
function walk(filter: ViewerFilter, limit: number): string[] {
  const ids: string[] = [];
  let page = queries!.page({ ...filter, limit });
  for (;;) {
    expect(page.offset).toBe(ids.length);
    ids.push(...page.runs.map((run) => run.id));
    if (page.runs.length < limit || ids.length === page.total) break;
    page = queries!.page({ ...filter, limit, before: page.runs.at(-1)!.id });
  }
  return ids;
}

/**
 * The same, from the oldest page back to the newest with `after`. The newest page comes whole, so it can repeat
 * runs of the page before it (what a user sees: a full first page, not a short one).
 */
function walkBack(filter: ViewerFilter, limit: number): string[] {
  const pages: string[][] = [];
  const seen = new Set<string>();
  let page = queries!.page({ ...filter, limit, after: "" });
  for (;;) {
    expect(page.runs.length).toBe(Math.min(limit, page.total));
    pages.unshift(page.runs.map((run) => run.id).filter((id) => !seen.has(id)));
    for (const run of page.runs) seen.add(run.id);
    if (page.offset === 0) break;
    page = queries!.page({ ...filter, limit, after: page.runs[0]!.id });
  }
  return pages.flat();
}

describe("the viewer's list queries", { timeout: 120_000 }, () => {
  it("page through thousands of runs newest first, by key both ways, under every filter, each from an index", () => {
    const file = path.join(tempDir(), "logs.db");
    const runs = specs();
    const ids = seedRuns(file, runs);
    queries = new ViewerQueries(openDatabaseSync(file).database);
    // Newest first; of two runs started in the same millisecond, the one written later first.
    const order = runs.map((run, index) => ({ run, id: ids[index]!, index })).sort((a, b) => b.run.startedAt - a.run.startedAt || b.index - a.index);
    const expected = (keep: (run: SeedRun) => boolean): string[] => order.filter((entry) => keep(entry.run)).map((entry) => entry.id);

    const all = walk({}, 200);
    expect(all).toHaveLength(COUNT);
    expect(all).toEqual(expected(() => true));
    expect(walkBack({}, 200)).toEqual(all);
    const first = queries.page({ limit: 3 });
    expect(first.total).toBe(COUNT);
    expect(first.runs[0]).toMatchObject({ id: all[0], tactic_name: "gamma", status: "ok", models: ["gpt-4o-mini"], prompt_tokens: 120, completion_tokens: 30, cost: 0.0012, duration_ms: 400, batch_id: "BATCHB" });
    // `after` a run near the newest end gives the newest page whole, not a short one.
    expect(queries.page({ limit: 50, after: all[10]! }).runs.map((run) => run.id)).toEqual(all.slice(0, 50));

    const cases: Array<[ViewerFilter, (run: SeedRun) => boolean]> = [
      [{ status: "error" }, (run) => run.status === "error"],
      [{ tactic: "beta" }, (run) => run.tactic === "beta"],
      [{ batch: "BATCHA" }, (run) => run.batchId === "BATCHA"],
      [{ batch: "none" }, (run) => run.batchId === undefined],
      [{ since: BASE + 300_000, until: BASE + 600_000 }, (run) => run.startedAt >= BASE + 300_000 && run.startedAt < BASE + 600_000],
      [{ search: "oslo" }, (run) => run.input.endsWith("Oslo")],
      // Words in most runs: the runs are read in list order and kept when they match.
      [{ search: "paris" }, (run) => run.input.endsWith("Paris")],
      [{ search: "question 1234" }, (run) => run.input.startsWith("question 1234 ")],
      [{ test: "any" }, (run) => run.test !== undefined],
      [{ test: "failed" }, (run) => run.test?.status === "failed"],
      [{ test: "passed", tactic: "beta" }, (run) => run.test?.status === "passed" && run.tactic === "beta"],
      [{ tactic: "alpha", status: "ok", batch: "BATCHB", search: "paris" }, (run) => run.tactic === "alpha" && run.status === "ok" && run.batchId === "BATCHB" && run.input.endsWith("Paris")],
    ];
    for (const [filter, keep] of cases) {
      const want = expected(keep);
      expect(want.length, JSON.stringify(filter)).toBeGreaterThan(0);
      expect(walk(filter, 50), JSON.stringify(filter)).toEqual(want);
      expect(walkBack(filter, 50), JSON.stringify(filter)).toEqual(want);
    }
    expect(queries.page({ limit: 50, tactic: "nosuch" })).toEqual({ runs: [], total: 0, offset: 0 });

    // Each filter reads a range of an index (SEARCH, never a SCAN of the table or of a whole index), the index of
    // its own column, and sorts no more than the page.
    for (const [filter] of [[{}], ...cases] as Array<[ViewerFilter]>) {
      const plan = queries.plans({ ...filter, limit: 50 });
      const context = JSON.stringify({ filter, plan });
      expect(plan.filter((line) => /^SCAN runs\b/.test(line)), context).toEqual([]);
      const indexes = [filter.status && "runs_status", filter.tactic && "runs_tactic", filter.batch && "runs_batch", filter.search && "PRIMARY KEY", filter.search && "runs_started", filter.test && "runs_test"].filter((name): name is string => Boolean(name));
      if (indexes.length === 0) indexes.push("runs_started");
      expect(plan.some((line) => line.startsWith("SEARCH runs") && indexes.some((index) => line.includes(index))), context).toBe(true);
      // One sort: of the page's own rows (ties of started_at are put in order as they come: "RIGHT PART OF").
      if (filter.search === undefined) expect(plan.filter((line) => line.includes("USE TEMP B-TREE FOR ORDER BY")).length, context).toBeLessThanOrEqual(1);
    }

    const facets = queries.facets();
    expect(facets.tactics).toEqual([{ name: "alpha", runs: 1000 }, { name: "beta", runs: 1000 }, { name: "gamma", runs: 1000 }]);
    expect(facets.batches.map((batch) => [batch.id, batch.runs, batch.tactic_name !== null])).toEqual([["BATCHB", 1125, true], ["BATCHA", 1125, true]]);
  });

  it("find, after the upgrade, the runs that a store of schema 2 holds", () => {
    const file = path.join(tempDir(), "logs.db");
    const Libsql = createRequire(import.meta.url)("libsql") as typeof import("libsql");
    const old = new Libsql(file);
    old.exec(MIGRATIONS[0]!);
    old.exec(MIGRATIONS[1]!);
    old.pragma("user_version = 2");
    const insertRun = old.prepare("INSERT INTO runs (id, started_at, status, tactic_name, input, output, models) VALUES (?, ?, 'ok', 'old', ?, ?, '[]')");
    const insertText = old.prepare("INSERT INTO runs_text (run_id, input, output) VALUES (?, ?, ?)");
    const inputs = ["about Lisbon", "about Oslo", "about Rome"];
    inputs.forEach((input, index) => insertRun.run(`RUN${index}`, BASE + index, input, JSON.stringify({ text: `answer ${index}` })));
    // Written in another order than the runs, as parallel runs finish: the text rows' rowids are not the runs'.
    [2, 0, 1].forEach((index) => insertText.run(`RUN${index}`, inputs[index], `answer ${index}`));
    old.close();

    queries = new ViewerQueries(openDatabaseSync(file).database);
    for (const [index, input] of inputs.entries()) {
      expect(queries.page({ limit: 10, search: input.split(" ")[1]! }).runs.map((run) => run.id)).toEqual([`RUN${index}`]);
    }
    expect(queries.page({ limit: 10, search: "answer" }).total).toBe(3);
    // A run finished after the upgrade is found too.
    seedRuns(file, [{ startedAt: BASE + 10, tactic: "new", input: "about Paris" }]);
    expect(queries.page({ limit: 10, search: "paris" }).runs.map((run) => run.tactic_name)).toEqual(["new"]);
  });
});

describe("the viewer's list parameters", () => {
  const parse = (query: string): ViewerPageRequest | string => pageRequest(new URLSearchParams(query));

  it("become a page request, and a wrong one says what is wrong", () => {
    expect(parse("")).toEqual({ limit: 50 });
    expect(parse("n=20&status=error&tactic=weather&batch=none&q=%20oslo%20&since=10&until=20&before=ABC")).toEqual({ limit: 20, status: "error", tactic: "weather", batch: "none", search: "oslo", since: 10, until: 20, before: "ABC" });
    expect(parse("after=")).toEqual({ limit: 50, after: "" });
    expect(parse("status=")).toEqual({ limit: 50 });
    expect(parse("status=fine")).toBe("status must be one of running, ok, error, interrupted, budget, crashed");
    expect(parse("n=0")).toBe("n must be a whole number from 1 to 200");
    expect(parse("n=5000")).toBe("n must be a whole number from 1 to 200");
    expect(parse("since=yesterday")).toBe("since must be a time in milliseconds since the epoch");
    expect(parse("test=failed")).toEqual({ limit: 50, test: "failed" });
    expect(parse("test=broken")).toBe("test must be any, passed or failed");
  });
});
