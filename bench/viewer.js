// The run viewer's list on a big store: each query of `lllm logs serve` (a page, with its count and position) on a
// store of 100,000 runs against the same query on a store of 1,000 runs (the baseline). Paging by key and indexed
// filters keep the ratio near 1; a query that scanned the table would be ~100x.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * A store of `count` runs: 3 tactics, 2% failures, a batch of 90% of the runs, one run in 7 about Oslo. Written in one
 * transaction with the statements RunStore uses (beginRun, finishRun), which would take minutes one commit at a time.
 */
function seed(openDatabaseSync, newRunId, file, count) {
  const database = openDatabaseSync(file);
  const insertRun = database.prepare(
    "INSERT INTO runs (id, started_at, ended_at, status, exit_code, tactic_path, tactic_name, config_digest, input, vars, output, models, prompt_tokens, completion_tokens, llm_calls, cost, duration_ms, lllm_version, batch_id) VALUES (?, ?, ?, ?, ?, ?, ?, 'bench', ?, '{}', ?, '[\"gpt-4o-mini\"]', 120, 30, 1, 0.0012, 400, 'bench', ?)",
  );
  const insertText = database.prepare("INSERT INTO runs_text (rowid, run_id, input, output) SELECT rowid, id, input, ? FROM runs WHERE id = ?");
  const start = Date.now() - count * 1000;
  database.transaction(() => {
    for (let index = 0; index < count; index++) {
      const id = newRunId(start + index * 1000);
      const status = index % 50 === 0 ? "error" : "ok";
      const answer = `answer ${index}`;
      insertRun.run(id, start + index * 1000, start + index * 1000 + 400, status, status === "ok" ? 0 : 1, "/bench/t.yaml", ["alpha", "beta", "gamma"][index % 3], `question ${index} about ${index % 7 ? "Paris" : "Oslo"}`, JSON.stringify({ text: answer }), index % 10 ? "BENCHBATCH" : null);
      insertText.run(answer, id);
    }
  })();
  database.close();
}

export async function viewerSuite({ runs, root }) {
  const { openDatabaseSync } = await import(path.join(root, "dist/store/openDatabase.js"));
  const { newRunId } = await import(path.join(root, "dist/util/newRunId.js"));
  const { ViewerQueries } = await import(path.join(root, "dist/store/viewer/viewerQueries.js"));
  const home = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-viewer-"));
  try {
    const stores = {};
    const middles = new Map();
    for (const count of [1_000, 100_000]) {
      const file = path.join(home, `${count}.db`);
      seed(openDatabaseSync, newRunId, file, count);
      const database = openDatabaseSync(file);
      stores[count] = new ViewerQueries(database);
      middles.set(stores[count], database.prepare("SELECT id FROM runs ORDER BY started_at LIMIT 1 OFFSET ?").raw().get(count / 2)[0]);
    }
    const cases = [
      ["newest page, no filter", () => ({ limit: 50 })],
      ["the middle page (by key)", (queries) => ({ limit: 50, before: middles.get(queries) })],
      ["oldest page", () => ({ limit: 50, after: "" })],
      ["status = error", () => ({ limit: 50, status: "error" })],
      ["tactic = beta", () => ({ limit: 50, tactic: "beta" })],
      ["not in a batch", () => ({ limit: 50, batch: "none" })],
      ["the last day", () => ({ limit: 50, since: Date.now() - 86_400_000 })],
      ["search: a word in 1 run of 7", () => ({ limit: 50, search: "oslo" })],
      ["search: one run", () => ({ limit: 50, search: "question 777" })],
      ["tactic + status + search", () => ({ limit: 50, tactic: "alpha", status: "ok", search: "paris" })],
    ];
    console.log(`\nViewer: a page of the list (rows, count, position) on 100,000 runs against 1,000 runs (median of ${runs})`);
    for (const [name, request] of cases) {
      const times = {};
      for (const count of [1_000, 100_000]) {
        const queries = stores[count];
        const query = request(queries);
        queries.page(query);
        const samples = [];
        for (let run = 0; run < runs; run++) {
          const start = performance.now();
          queries.page(query);
          samples.push(performance.now() - start);
        }
        times[count] = median(samples);
      }
      console.log(`  ${name.padEnd(34)} ${times[100_000].toFixed(2).padStart(8)} ms   ${times[1_000].toFixed(2).padStart(7)} ms on 1,000   ${(times[100_000] / times[1_000]).toFixed(1)}x baseline`);
    }
    const facets = {};
    for (const count of [1_000, 100_000]) {
      const start = performance.now();
      stores[count].facets();
      facets[count] = performance.now() - start;
    }
    console.log(`  ${"the filters' choices (facets)".padEnd(34)} ${facets[100_000].toFixed(2).padStart(8)} ms   ${facets[1_000].toFixed(2).padStart(7)} ms on 1,000   ${(facets[100_000] / facets[1_000]).toFixed(1)}x baseline`);
    for (const queries of Object.values(stores)) queries.close();
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
