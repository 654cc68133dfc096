import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MockBatchOptions, MockOpenAIServer } from "../../src/testing/index.js";
import { runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { batch, batchInProcess, readResults, removeTempDirs, spawnBatch } from "./batchTestHelpers.js";
import { expectSummaryCost, ITEM_BATCH_COST, killDuringRoundTwo, OPENAI_BATCH_KEY, openAIBatchServer, providerBatchProject, toolRuns } from "./providerBatchHelpers.js";

let servers: MockOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
  removeTempDirs();
});

/** The tool's notes in $CALLS_FILE: calls that returned, and calls held (never returning, see `HOLD_AT`). */
function readCalls(file: string): { completed: number; held: number } {
  const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n") : [];
  const held = lines.filter((line) => line.endsWith(" held")).length;
  return { completed: lines.filter((line) => /^\d/.test(line)).length - held, held };
}

/**
 * How many tool outcomes the run store keeps for provider batches (read as lllm writes them: SQLite in WAL mode), not
 * counting the notes of calls that started and have no outcome yet.
 */
function keptToolResults(home: string): number {
  const Database = createRequire(import.meta.url)("libsql") as typeof import("libsql");
  const database = new Database(path.join(home, "logs.db"), { readonly: true });
  try {
    return Number((database.prepare(`SELECT count(*) FROM provider_batch_tool_results WHERE result NOT LIKE '{"unfinished":%'`).raw().get() as [number])[0]);
  } catch {
    return -1;
  } finally {
    database.close();
  }
}

/** The requests of each job, in the order they were submitted. */
function jobSizes(server: MockOpenAIServer): number[] {
  return [...server.batches.jobs.values()].map((job) => job.requests.length);
}

async function project(count: number, options: { extraTools?: string[]; batch?: MockBatchOptions } = {}) {
  const jobs: MockBatchOptions = options.batch ?? { delayMs: 300 };
  const server = await openAIBatchServer(jobs);
  servers.push(server);
  const setup = providerBatchProject({ model: "gpt-4o-mini", invokerConfig: `{base_url: "${server.url}", api_key_env: MOCK_KEY}`, count, ...(options.extraTools ? { extraTools: options.extraTools } : {}), extraEnv: { MOCK_KEY: OPENAI_BATCH_KEY } });
  const calls = path.join(setup.dir, "calls.txt");
  return { server, jobs, setup, calls, env: { ...setup.env, CALLS_FILE: calls } };
}

// The runs killed or stopped, the runs after them and one `logs` are the built CLI (`spawnBatch`, `batch`, `runCli`),
// end to end and where a process is the point; the others run its main() in this process (`batchInProcess`,
// `runCliInProcess`): what they check does not depend on being a process of its own.
describe("lllm batch --provider-batch: items wait for their jobs as data", () => {
  it("every item's request of a round goes into one job whatever --concurrency is; each tool call runs once, though items run again from their start; one record per item", async () => {
    const { server, setup, calls, env } = await project(60);
    // --concurrency 5: five items run at once (replaying, running tools); the waiting ones hold no slot.
    const result = await batchInProcess([setup.tactic, "--inputs", setup.inputs, "--lines", "--out", setup.out, "--provider-batch", "--poll-interval", "0.05", "--concurrency", "5"], env);
    expect(result.code, result.stderr).toBe(0);
    expect(jobSizes(server)).toEqual([60, 60, 60]);
    expect(toolRuns(calls)).toBe(120);
    const lines = readResults(setup.out);
    expect(lines).toHaveLength(60);
    expect(lines.every((line) => line.status === "ok" && line.output === `q${line.id}: 13` && line.usage.llm_calls === 3 && Math.abs((line.cost ?? 0) - ITEM_BATCH_COST) < 1e-12)).toBe(true);
    // Each item's three attempts wrote one record, closed by the last: ok, with its three model calls and two tool calls.
    const runIds = new Set(lines.map((line) => line.run_id));
    expect(runIds.size).toBe(60);
    const listed = await runCliInProcess(["logs", "--json", "-n", "500"], { env: setup.env });
    const { runs } = JSON.parse(listed.stdout) as { runs: Array<{ id: string; status: string; llm_calls: number }> };
    expect(runs).toHaveLength(60);
    expect(runs.every((run) => runIds.has(run.id) && run.status === "ok" && run.llm_calls === 3)).toBe(true);
    const shown = await runCli(["logs", "show", lines[0]!.run_id!], { env: setup.env });
    expect(shown.stdout.match(/^.*\badd\b.*$/gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
  }, 180_000);

  it("killed during a round and run again: the tools of the answered rounds are not run again", async () => {
    const { server, jobs, setup, calls, env } = await project(40);
    const args = [setup.tactic, "--inputs", setup.inputs, "--lines", "--out", setup.out, "--provider-batch", "--poll-interval", "0.05"];
    const first = spawnBatch(args, env);
    await killDuringRoundTwo(first, server.batches, jobs, "openai");
    expect(toolRuns(calls)).toBe(40);
    const again = await batch(args, env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("polling 1 provider batch job submitted by an earlier run");
    expect(jobSizes(server)).toEqual([40, 40, 40]);
    expect(toolRuns(calls)).toBe(80);
    const lines = readResults(setup.out);
    expect(lines).toHaveLength(40);
    expect(lines.every((line) => line.status === "ok" && line.output === `q${line.id}: 13`)).toBe(true);
  }, 180_000);

  it("1,000 items killed while round 1's tools run: the next run submits nothing twice, loses no item, and runs again only the calls whose outcome was not kept", async () => {
    const { server, setup, calls, env } = await project(1000, { batch: { delayMs: 0 } });
    const args = [setup.tactic, "--inputs", setup.inputs, "--lines", "--out", setup.out, "--provider-batch", "--poll-interval", "0.05"];
    // From the 500th call on, the tool never returns: half the items have their round-2 request kept, the others
    // are stuck in their tool call (or wait for a slot) when lllm is killed.
    const first = spawnBatch(args, { ...env, HOLD_AT: "500" });
    const held = await waitUntil(() => readCalls(calls).held > 0, 120_000);
    expect(held, first.stderr()).toBe(true);
    // Wait for the outcomes of the calls that returned to be kept (they are written 50 ms or 200 at a time).
    const { completed } = readCalls(calls);
    expect(await waitUntil(() => keptToolResults(setup.home) === completed, 60_000)).toBe(true);
    first.child.kill("SIGKILL");
    await first.done;
    expect(server.batches.count).toBe(1);
    const again = await batch(args, env);
    expect(again.code, again.stderr).toBe(0);
    // Round 1's job was answered before the kill: its answers are read back, not asked for again.
    expect(jobSizes(server)).toEqual([1000, 1000, 1000]);
    const submitted = [...server.batches.jobs.values()].flatMap((job) => job.requests.map((request) => request.customId));
    expect(new Set(submitted).size).toBe(3000);
    // Each call ran once, but for those cut off by the kill (their outcome was never known): they ran again.
    expect(toolRuns(calls) - readCalls(calls).held).toBe(2000);
    const lines = readResults(setup.out);
    expect(lines.map((line) => Number(line.id)).sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, index) => index + 1));
    expect(lines.every((line) => line.status === "ok" && line.output === `q${line.id}: 13` && Math.abs((line.cost ?? 0) - ITEM_BATCH_COST) < 1e-12)).toBe(true);
    expectSummaryCost(again.stderr, 1000, 1000 * ITEM_BATCH_COST);
  }, 240_000);

  it("Ctrl-C while the items wait: exit 130 at once, nothing written, the job kept; the same command then finishes every item", async () => {
    // The mock's jobs end only once the test says so (it reads the delay at each poll).
    const timing: MockBatchOptions = { delayMs: 600_000 };
    const { server, setup, calls, env } = await project(20, { batch: timing });
    const args = [setup.tactic, "--inputs", setup.inputs, "--lines", "--out", setup.out, "--provider-batch", "--poll-interval", "0.05"];
    const first = spawnBatch(args, env);
    await waitUntil(() => first.stderr().includes("submitted openai batch job"), 60_000);
    first.child.kill("SIGINT");
    const stopped = await first.done;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toContain("the provider batch jobs keep running; run the same command again to pick them up");
    expect(readResults(setup.out)).toHaveLength(0);
    timing.delayMs = 0;
    const again = await batch(args, env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("polling 1 provider batch job submitted by an earlier run");
    expect(jobSizes(server)).toEqual([20, 20, 20]);
    expect(toolRuns(calls)).toBe(40);
    expect(readResults(setup.out).every((line) => line.status === "ok" && line.output === `q${line.id}: 13`)).toBe(true);
  }, 180_000);

  it("a tactic whose tools keep state of their own (here an agent used as a tool) waits in memory, --concurrency items per round", async () => {
    const { server, setup, calls, env } = await project(12, { extraTools: ["agent:helper"] });
    const result = await batchInProcess([setup.tactic, "--inputs", setup.inputs, "--lines", "--out", setup.out, "--provider-batch", "--poll-interval", "0.05", "--concurrency", "6", "--no-log"], env);
    expect(result.code, result.stderr).toBe(0);
    expect(jobSizes(server).reduce((sum, size) => sum + size, 0)).toBe(36);
    expect(Math.max(...jobSizes(server))).toBeLessThanOrEqual(6);
    expect(toolRuns(calls)).toBe(24);
    expect(readResults(setup.out).every((line) => line.status === "ok" && line.output === `q${line.id}: 13`)).toBe(true);
  }, 180_000);
});
