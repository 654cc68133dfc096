import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { endedPid } from "../helpers/endedPid.js";
import type { MockOpenAIServer } from "../../src/testing/index.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { batch, batchInProcess, readResults, removeTempDirs, spawnBatch } from "./batchTestHelpers.js";
import { runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import type { MockBatchOptions } from "../../src/testing/index.js";
import { expectSummaryCost, ITEM_BATCH_COST, killDuringRoundTwo, OPENAI_BATCH_KEY, openAIBatchServer, providerBatchProject, questionIn, toolResultsIn } from "./providerBatchHelpers.js";

let servers: MockOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
  removeTempDirs();
});

// The first batch, the runs after a kill and one --status are the built CLI (`batch`, `runCli`), end to end and where a
// process is the point; the rest run its main() in this process (`batchInProcess`): what they check (the jobs, the
// messages, the results file) does not depend on being a process of its own.
const modelCalls = (server: MockOpenAIServer): number => server.requests.filter((request) => request.path === "/v1/chat/completions").length;

describe("lllm batch --provider-batch over OpenAI's Batch API", () => {
  it("runs a three-round tool-using tactic as three batch jobs, tools run locally between rounds, at the batch price", async () => {
    const server = await openAIBatchServer();
    servers.push(server);
    const project = providerBatchProject({ model: "gpt-4o-mini", invokerConfig: `{base_url: "${server.url}", api_key_env: MOCK_KEY}`, count: 40, extraEnv: { MOCK_KEY: OPENAI_BATCH_KEY } });
    // The upload folder of an lllm killed with SIGKILL (its pid is gone): this run removes it before making its own.
    const orphan = path.join(tmpdir(), `lllm-batch-${await endedPid()}-Xy12Zw`);
    mkdirSync(orphan);
    writeFileSync(path.join(orphan, "requests.jsonl"), "{}\n");
    // Spawned: the orphaned folders are swept once per process (a process's first upload), and end to end.
    const result = await batch([project.tactic, "--inputs", project.inputs, "--lines", "--out", project.out, "--provider-batch", "--poll-interval", "0.05"], project.env);
    expect(result.stderr).toContain("submitted openai batch job");
    expect(result.code, result.stderr).toBe(0);
    const lines = readResults(project.out);
    expect(lines).toHaveLength(40);
    for (const line of lines) {
      expect(line.status).toBe("ok");
      // 1 + 2 = 3, then 3 + 10 = 13: the tool ran between the rounds.
      expect(line.output).toBe(`q${line.id}: 13`);
      expect(line.usage.llm_calls).toBe(3);
      expect(line.cost).toBeCloseTo(ITEM_BATCH_COST, 12);
    }
    expect(server.batches.count).toBe(3);
    expect(modelCalls(server)).toBe(0);
    const uploads = server.requests.filter((request) => request.path === "/v1/files");
    expect(uploads).toHaveLength(3);
    expect(uploads.every((request) => request.headers.authorization === `Bearer ${OPENAI_BATCH_KEY}`)).toBe(true);
    expect(result.stderr).toContain(`$${(40 * ITEM_BATCH_COST).toPrecision(2)}`);
    expect(existsSync(orphan)).toBe(false);
  }, 120_000);

  it("1,000 items killed during a round and run again: polls the same job (no duplicate submission), every item written once", async () => {
    const options: MockBatchOptions = { delayMs: 1500 };
    const server = await openAIBatchServer(options);
    servers.push(server);
    const project = openAIProject(server, 1000);
    const args = [project.tactic, "--inputs", project.inputs, "--lines", "--out", project.out, "--provider-batch", "--poll-interval", "0.05"];
    const first = spawnBatch(args, project.env);
    // Round 1 answered (its answers stored), round 2 submitted (and recorded: lllm says so once it is): kill lllm
    // while the job runs at the provider.
    await killDuringRoundTwo(first, server.batches, options, "openai");
    expect(readResults(project.out)).toHaveLength(0);
    const again = await batch(args, project.env);
    expect(again.stderr).toContain("polling 1 provider batch job submitted by an earlier run");
    expect(again.code, again.stderr).toBe(0);
    // Round 2's job was polled again, not submitted again: three jobs in all, each request in one job only.
    expect(server.batches.count).toBe(3);
    const submitted = [...server.batches.jobs.values()].flatMap((job) => job.requests.map((request) => request.customId));
    expect(new Set(submitted).size).toBe(submitted.length);
    expect(submitted).toHaveLength(3000);
    const lines = readResults(project.out);
    expect(lines.map((line) => Number(line.id)).sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, index) => index + 1));
    expect(lines.every((line) => line.status === "ok" && line.output === `q${line.id}: 13`)).toBe(true);
    expect(lines.every((line) => Math.abs((line.cost ?? 0) - ITEM_BATCH_COST) < 1e-12)).toBe(true);
    // The summary counts the whole batch, the rounds of the killed run too, at the batch price.
    expectSummaryCost(again.stderr, 1000, 1000 * ITEM_BATCH_COST);
  }, 180_000);

  it("a request the provider refuses in a job fails that item only, with the provider's message", async () => {
    const server = await openAIBatchServer({ reject: (body) => (questionIn(body) === "q3" && toolResultsIn(body).length === 1 ? "Invalid 'messages[3]': mock refusal of this one request" : undefined) });
    servers.push(server);
    const project = openAIProject(server, 6);
    const result = await batchInProcess([project.tactic, "--inputs", project.inputs, "--lines", "--out", project.out, "--provider-batch", "--poll-interval", "0.05", "--no-log"], project.env);
    expect(result.code, result.stderr).toBe(1);
    const lines = readResults(project.out);
    expect(lines).toHaveLength(6);
    const failed = lines.filter((line) => line.status === "error");
    expect(failed.map((line) => line.id)).toEqual(["3"]);
    expect(failed[0]!.error!.code).toBe("provider_batch_request");
    expect(failed[0]!.error!.message).toContain("mock refusal of this one request");
    expect(lines.filter((line) => line.status === "ok")).toHaveLength(5);
  }, 120_000);

  it("a job that expires or fails is submitted again for its unanswered requests; polls that fail with 5xx are polled on", async () => {
    const server = await openAIBatchServer();
    servers.push(server);
    server.batches.failNext("expired", "failed");
    server.batches.failPolls(500, 503, 502);
    const project = openAIProject(server, 5);
    const result = await batchInProcess([project.tactic, "--inputs", project.inputs, "--lines", "--out", project.out, "--provider-batch", "--poll-interval", "0.05", "--no-log"], project.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("HTTP 500");
    expect(result.stderr).toContain("polling on");
    expect(result.stderr).toMatch(/ended \(expired\): 0 answers, 5 to submit again/);
    expect(server.batches.count).toBe(5);
    expect(readResults(project.out).every((line) => line.status === "ok")).toBe(true);
  }, 120_000);

  it("refuses before submitting anything (exit 2): no --out, a missing key, a model not in the table, no agent with a batch API", async () => {
    const server = await openAIBatchServer();
    servers.push(server);
    const project = openAIProject(server, 3);
    const base = [project.tactic, "--inputs", project.inputs, "--lines", "--provider-batch"];
    const noOut = await batchInProcess(base, project.env);
    expect(noOut.code, noOut.stderr).toBe(2);
    expect(noOut.stderr).toContain("--provider-batch needs --out");
    const noKey = await batchInProcess([...base, "--out", project.out], { ...project.env, MOCK_KEY: "" });
    expect(noKey.code, noKey.stderr).toBe(2);
    expect(noKey.stderr).toContain("MOCK_KEY");
    const typo = await batchInProcess([...base, "--out", project.out, "--model", "gpt-4o-mni"], project.env);
    expect(typo.code, typo.stderr).toBe(2);
    expect(typo.stderr).toContain("`gpt-4o-mni` (agent `bot`) is not in lllm's model table");
    const groq = await batchInProcess([...base, "--out", project.out, "--model", "groq/llama-3.1-8b-instant"], { ...project.env, GROQ_API_KEY: "gsk-mock-key-123" });
    expect(groq.code, groq.stderr).toBe(2);
    expect(groq.stderr).toContain("no agent of the tactic uses a provider with a batch API");
    expect(server.requests).toHaveLength(0);
    expect(readResults(project.out)).toHaveLength(0);
  }, 120_000);

  it("--status shows the jobs of an --out file without waiting; --cancel cancels them at the provider; a rerun submits the cancelled requests again", async () => {
    const { options, server, project, args } = await killedAfterFirstJob(4);
    const status = await runCliInProcess(["batch", "--status", "--out", project.out], { env: project.env });
    expect(status.stderr).toBe("");
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^openai\tbatch_mock_1\trunning \(in_progress\)\t4 requests, 0\/4 done\tsubmitted \d+ s ago\n$/);
    const cancel = await runCliInProcess(["batch", "--cancel", "--out", project.out], { env: project.env });
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(server.requests.some((request) => request.method === "POST" && request.path === "/v1/batches/batch_mock_1/cancel")).toBe(true);
    expect(cancel.stderr).toContain("1 job cancelled at the provider");
    options.delayMs = 0;
    // Spawned: the run after the kill picks up what the killed one left.
    const again = await batch(args, project.env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/batch_mock_1 ended \(cancelled\): 0 answers, 4 to submit again/);
    expect(readResults(project.out).filter((line) => line.status === "ok")).toHaveLength(4);
    const after = await runCliInProcess(["batch", "--status", "--out", project.out], { env: project.env });
    const nothing = await runCliInProcess(["batch", "--cancel", "--out", project.out], { env: project.env });
    expect(nothing.code, nothing.stderr).toBe(0);
    expect(nothing.stderr).toContain("no job of this --out file is running at the provider: nothing to cancel");
    expect(after.stdout.split("\n").filter(Boolean)).toHaveLength(4);
    expect(after.stdout).toContain("batch_mock_1\tcancelled");
  }, 180_000);

  it("a job id with a line break or a control character (a hostile provider's) is shown escaped on one line, on stderr and in --status", async () => {
    const server = await openAIBatchServer({ jobIdPrefix: "batch\nlllm: forged\t\u001b[2K_" });
    servers.push(server);
    const project = openAIProject(server, 2);
    const result = await batchInProcess([project.tactic, "--inputs", project.inputs, "--lines", "--out", project.out, "--provider-batch", "--poll-interval", "0.05", "--no-log"], project.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("submitted openai batch job batch\\nlllm: forged\\t\\u001b[2K_1 (2 requests)");
    expect(result.stderr).toContain("openai batch job batch\\nlllm: forged\\t\\u001b[2K_3 ended: 2 answers");
    expect(result.stderr.split("\n").filter((line) => line.startsWith("lllm: forged"))).toEqual([]);
    // Spawned: --status end to end.
    const status = await runCli(["batch", "--status", "--out", project.out], { env: project.env });
    expect(status.code, status.stderr).toBe(0);
    const rows = status.stdout.split("\n").filter(Boolean);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row.split("\t")).toHaveLength(5);
    expect(rows[0]).toMatch(/^openai\tbatch\\nlllm: forged\\t\\u001b\[2K_1\tended\t/);
  }, 120_000);

  it("--max-cost counts the estimated price of requests in jobs still running: a rerun under a lower limit submits nothing more, and collects the job already submitted before it stops", async () => {
    const { options, server, project, args } = await killedAfterFirstJob(40);
    // Nothing is spent yet (no result line), but round 1 of 40 items is at the provider: at least its prompts'
    // price, about 40 x 150 tokens x $0.075 per million, some $0.0005.
    options.delayMs = 0;
    const capped = await batch([...args, "--max-cost", "0.0002"], project.env);
    expect(capped.code, capped.stderr).toBe(3);
    expect(capped.stderr).toMatch(/--max-cost 0\.0002 reached: \$0(\.0+)? spent, and \$[0-9.]+ committed \(the estimated batch price of requests in provider jobs not answered yet\)/);
    expect(server.batches.count).toBe(1);
    expect(readResults(project.out)).toHaveLength(0);
    // The job is paid for: the capped run waited for it and took its answers (it used to leave it at the provider).
    expect(capped.stderr).toContain("--max-cost stops the batch; waiting for the 1 provider batch job already submitted to end (it is paid for)");
    expect(capped.stderr).toContain("openai batch job batch_mock_1 ended: 40 answers");
    expect(capped.stderr).toContain("1 job ended: its answers are kept, and the same command with a higher --max-cost uses them instead of submitting again");
    const downloads = (): number => server.requests.filter((request) => request.path === "/v1/files/file-batch_mock_1-output/content").length;
    expect(downloads()).toBe(1);
    // Raised, the same command uses the job's answers (not submitted again, not polled again) and finishes at the batch price.
    const raised = await batch([...args, "--max-cost", "1"], project.env);
    expect(raised.stderr).not.toContain("polling 1 provider batch job submitted by an earlier run");
    expect(downloads()).toBe(1);
    expect(raised.code, raised.stderr).toBe(0);
    expect(server.batches.count).toBe(3);
    const lines = readResults(project.out);
    expect(lines).toHaveLength(40);
    expect(lines.every((line) => line.status === "ok" && Math.abs((line.cost ?? 0) - ITEM_BATCH_COST) < 1e-12)).toBe(true);
  }, 180_000);

  it("killed after the job was made but before its id came back: the next run finds the job by its label instead of submitting it again", async () => {
    const options: MockBatchOptions = { createDelayMs: 60_000 };
    const server = await openAIBatchServer(options);
    servers.push(server);
    const project = openAIProject(server, 5);
    const args = [project.tactic, "--inputs", project.inputs, "--lines", "--out", project.out, "--provider-batch", "--poll-interval", "0.05", "--no-log"];
    const first = spawnBatch(args, project.env);
    await waitUntil(() => server.batches.count === 1, 60_000);
    first.child.kill("SIGKILL");
    await first.done;
    expect(first.stderr()).not.toContain("submitted openai batch job");
    options.createDelayMs = 0;
    const again = await batch(args, project.env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("polling 1 provider batch job submitted by an earlier run");
    expect(server.batches.count).toBe(3);
    expect(readResults(project.out).filter((line) => line.status === "ok")).toHaveLength(5);
  }, 120_000);
});

/** A batch of `count` items killed once its first job (which the mock keeps running) is submitted. */
async function killedAfterFirstJob(count: number): Promise<{ options: MockBatchOptions; server: MockOpenAIServer; project: ReturnType<typeof providerBatchProject>; args: string[] }> {
  const options: MockBatchOptions = { delayMs: 3_600_000 };
  const server = await openAIBatchServer(options);
  servers.push(server);
  const project = openAIProject(server, count);
  const args = [project.tactic, "--inputs", project.inputs, "--lines", "--out", project.out, "--provider-batch", "--poll-interval", "0.05", "--no-log"];
  const first = spawnBatch(args, project.env);
  await waitUntil(() => first.stderr().includes("submitted openai batch job batch_mock_1"), 60_000);
  first.child.kill("SIGKILL");
  await first.done;
  return { options, server, project, args };
}

function openAIProject(server: MockOpenAIServer, count: number): ReturnType<typeof providerBatchProject> {
  return providerBatchProject({ model: "gpt-4o-mini", invokerConfig: `{base_url: "${server.url}", api_key_env: MOCK_KEY}`, count, extraEnv: { MOCK_KEY: OPENAI_BATCH_KEY } });
}
