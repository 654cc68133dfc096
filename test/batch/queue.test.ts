import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MockOpenAIServer } from "../../src/testing/index.js";
import { BIN, ROOT } from "../helpers/runCli.js";
import { echoSetup, readResults, removeTempDirs, spawnBatch, until } from "./batchTestHelpers.js";
import { hasRedis, RedisServer } from "./redisServer.js";

// Skips only where redis-server is missing locally; in CI (CI=true) it is installed and the tests must run.
const describeRedis = hasRedis || process.env.CI === "true" ? describe : describe.skip;

let servers: MockOpenAIServer[] = [];
let redises: RedisServer[] = [];
let children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  children = [];
  await Promise.all(redises.map((redis) => redis.stop()));
  redises = [];
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
  removeTempDirs();
});

function startWorker(url: string, env: NodeJS.ProcessEnv, concurrency = 4): { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, "worker", "--queue", url, "--concurrency", String(concurrency), "--no-log"], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1", ...env }, stdio: ["ignore", "ignore", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, stderr: () => stderr, exited };
}

function itemsFile(dir: string, count: number): string {
  const file = path.join(dir, "items.txt");
  writeFileSync(file, Array.from({ length: count }, (_, index) => `q${index + 1}`).join("\n"));
  return file;
}

function expectEveryItemOnce(out: string, count: number): void {
  const results = readResults(out);
  expect(results.map((line) => line.id).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: count }, (_, index) => String(index + 1)));
  expect(results.every((line) => line.status === "ok")).toBe(true);
  for (const line of results) expect(line.output).toBe(`echo: q${line.id}`);
}

describeRedis("lllm batch --queue with lllm worker", () => {
  it("two workers, one killed with SIGKILL mid-run: every item appears exactly once", async () => {
    const redis = await RedisServer.start();
    redises.push(redis);
    const setup = await echoSetup({ delayMs: 150 });
    servers.push(setup.server);
    const env = { ...setup.env, LLLM_QUEUE_LOCK_MS: "2000" };
    const out = path.join(setup.dir, "out.jsonl");
    const producer = spawnBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 60), "--lines", "--out", out, "--queue", redis.url, "--no-log"], env);
    children.push(producer.child);
    const doomed = startWorker(redis.url, env);
    // More items at once than an AbortSignal's default listener limit (10): no "possible memory leak" warning.
    const survivor = startWorker(redis.url, env, 16);
    await until(() => doomed.stderr().includes("joined batch") && setup.answered() >= 10);
    doomed.child.kill("SIGKILL");
    const result = await producer.done;
    expect(result.stderr).toContain("60 ok, 0 failed");
    expect(result.code).toBe(0);
    expectEveryItemOnce(out, 60);
    survivor.child.kill("SIGINT");
    expect(await survivor.exited).toBe(130);
    expect(survivor.stderr()).not.toContain("MaxListenersExceededWarning");
  }, 180_000);

  it("Redis restarted mid-batch: the producer and the worker reconnect and finish, every item once", async () => {
    const redis = await RedisServer.start();
    redises.push(redis);
    const setup = await echoSetup({ delayMs: 100 });
    servers.push(setup.server);
    const out = path.join(setup.dir, "out.jsonl");
    const producer = spawnBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 40), "--lines", "--out", out, "--queue", redis.url, "--concurrency", "20", "--no-log"], { ...setup.env, LLLM_QUEUE_LOCK_MS: "2000" });
    children.push(producer.child);
    startWorker(redis.url, { ...setup.env, LLLM_QUEUE_LOCK_MS: "2000" });
    await until(() => setup.answered() >= 10);
    await redis.stop();
    await redis.restart();
    const result = await producer.done;
    expect(result.code).toBe(0);
    expectEveryItemOnce(out, 40);
  }, 180_000);

  it("a worker whose copy of the tactic differs refuses the batch, and the producer says so", async () => {
    const redis = await RedisServer.start();
    redises.push(redis);
    const setup = await echoSetup();
    servers.push(setup.server);
    const producer = spawnBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 3), "--lines", "--queue", redis.url, "--no-log"], setup.env);
    children.push(producer.child);
    // Once the batch is announced, change the tactic: this machine's copy no longer matches.
    await until(() => producer.stderr().includes("start `lllm worker"));
    writeFileSync(setup.tactic, readFileSync(setup.tactic, "utf8").replace("Answer.", "Answer in French."));
    const worker = startWorker(redis.url, setup.env);
    await until(() => worker.stderr().includes("refused"));
    expect(worker.stderr()).toMatch(/differs from this worker's copy/);
    await until(() => producer.stderr().includes("refuses this batch"));
    producer.child.kill("SIGINT");
    await until(() => producer.stderr().includes("no new items"));
    producer.child.kill("SIGINT");
    const result = await producer.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain("waiting for the 3 running");
    expect(setup.answered()).toBe(0);
  }, 120_000);

  it("a worker whose copy of the tactic holds a self-referencing alias refuses the batch at the alias (issue 19 item 9)", async () => {
    const redis = await RedisServer.start();
    redises.push(redis);
    const setup = await echoSetup();
    servers.push(setup.server);
    const producer = spawnBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 2), "--lines", "--queue", redis.url, "--no-log"], setup.env);
    children.push(producer.child);
    await until(() => producer.stderr().includes("start `lllm worker"));
    // Parsing it once hung the worker at 100% CPU (the parse cache walked data that contained itself).
    writeFileSync(setup.tactic, `${readFileSync(setup.tactic, "utf8")}vars: &v {again: *v}\n`);
    const worker = startWorker(redis.url, setup.env);
    await until(() => worker.stderr().includes("refused"));
    expect(worker.stderr()).toMatch(/cannot load the tactic .*echo\.yaml:9:18: the alias `\*v` is inside the value its anchor names/);
    worker.child.kill("SIGINT");
    expect(await worker.exited).toBe(130);
    producer.child.kill("SIGINT");
    await until(() => producer.stderr().includes("no new items"));
    producer.child.kill("SIGINT");
    await producer.done;
    expect(setup.answered()).toBe(0);
  }, 120_000);
});
