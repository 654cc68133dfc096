import path from "node:path";
import { expect, it } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { describeRedis, eventually, expectedIds, itemsFile, kitSetup, okIds, QUICK, startBatch, startRedis, startWorker, trackQueueTests } from "./queueTestHelpers.js";

trackQueueTests();

/** Every key but the live workers' heartbeats. */
async function batchKeys(client: ReturnType<Awaited<ReturnType<typeof startRedis>>["client"]>): Promise<string[]> {
  return (await client.keys("*")).filter((key) => !key.startsWith("lllm:worker:")).sort();
}

describeRedis("a queued batch leaves nothing in Redis", () => {
  it("a batch whose producer was killed is removed by a worker", async () => {
    const redis = await startRedis();
    const setup = await kitSetup({ delayMs: 200 });
    // The killed producer's heartbeat is taken for gone after 3 s (30 beats; the test-facing LLLM_QUEUE_ALIVE_MS), not
    // production's 5 s floor: the worker removes the batch 2 s sooner.
    const env = { ...setup.env, ...QUICK, LLLM_QUEUE_ALIVE_MS: "3000" };
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 50), "--lines", "--queue", redis.url, "--no-log"], env);
    const worker = startWorker(redis.url, env, { packages: [setup.kit] });
    await eventually(() => setup.answered() >= 3);
    const client = redis.client();
    expect((await batchKeys(client)).length).toBeGreaterThan(5);
    producer.child.kill("SIGKILL");
    await eventually(async () => (await batchKeys(client)).length === 0, { state: () => batchKeys(client) });
    // The worker says so after the last key is gone: wait for its line to come through the pipe.
    await eventually(() => /removed batch \w+ from Redis: its `lllm batch` is gone/.test(worker.stderr()), { state: () => worker.stderr() });
    worker.child.kill("SIGINT");
    expect(await worker.exited).toBe(130);
  }, 120_000);

  it("--purge --out FILE removes the keys of the batch that wrote FILE once its producer is gone, and keeps a running one", async () => {
    const redis = await startRedis();
    const setup = await kitSetup();
    const env = { ...setup.env, ...QUICK };
    const out = path.join(setup.dir, "out.jsonl");
    // No worker: the batch waits, alive, with its 30 jobs in the queue.
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 30), "--lines", "--out", out, "--queue", redis.url, "--no-log"], env);
    await eventually(() => producer.stderr().includes("to run its items"));
    const client = redis.client();
    await eventually(async () => (await client.keys("bull:*")).length >= 30);
    const running = await runCli(["batch", "--queue", redis.url, "--purge", "--out", out], { env, cwd: setup.dir });
    expect(running.code, running.stderr).toBe(1);
    expect(running.stderr).toMatch(new RegExp(`batch \\w+ \\(${setup.tactic.replaceAll("/", "\\/")}, writing ${out.replaceAll("/", "\\/")}\\) is still running \\(process ${producer.child.pid} on `));
    const all = await runCli(["batch", "--queue", redis.url, "--purge"], { env });
    expect(all.code, all.stderr).toBe(0);
    expect(all.stderr).toContain(`removed 0 batches from ${redis.url}; 1 still running, kept`);
    expect((await batchKeys(client)).length).toBeGreaterThan(30);

    producer.child.kill("SIGKILL");
    await producer.exited;
    // At once: on this machine the producer's process is seen gone before its heartbeat expires.
    const purged = await runCli(["batch", "--queue", redis.url, "--purge", "--out", "out.jsonl"], { env, cwd: setup.dir });
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stderr).toMatch(/removed batch \w+ \(/);
    expect(purged.stderr).toContain(`removed 1 batch from ${redis.url}`);
    expect(await batchKeys(client)).toEqual([]);
    const again = await runCli(["batch", "--queue", redis.url, "--purge", "--out", out], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain("nothing to remove");
  }, 120_000);

  it("no worker for LLLM_QUEUE_NO_WORKER_MS: the batch warns, and goes on when one comes", async () => {
    const redis = await startRedis();
    const setup = await kitSetup();
    const env = { ...setup.env, ...QUICK, LLLM_QUEUE_NO_WORKER_MS: "300" };
    const out = path.join(setup.dir, "out.jsonl");
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 4), "--lines", "--out", out, "--queue", redis.url, "--no-log"], env);
    await eventually(() => producer.stderr().includes("no `lllm worker` has been connected"));
    expect(producer.stderr()).toMatch(new RegExp(`lllm: warning: no \`lllm worker\` has been connected to redis://127\\.0\\.0\\.1:${redis.port} for \\d+\\.\\d s: the items wait in the queue; start one with \`lllm worker --queue redis://127\\.0\\.0\\.1:${redis.port} -p DIR\``));
    startWorker(redis.url, env, { packages: [setup.kit] });
    expect(await producer.exited).toBe(0);
    expect(okIds(out)).toEqual(expectedIds(4));
  }, 120_000);

  it("a worker idle for many rounds adds no listener each round (no MaxListenersExceededWarning)", async () => {
    const redis = await startRedis();
    const setup = await kitSetup();
    const worker = startWorker(redis.url, { ...setup.env, LLLM_QUEUE_HEARTBEAT_MS: "20" });
    // Count the worker's rounds by its heartbeat, which it renews with the time each round.
    const client = redis.client();
    const seen = new Set<string>();
    await eventually(async () => {
      const keys = await client.keys("lllm:worker:*");
      for (const key of keys) {
        const value = await client.get(key);
        if (value !== null) seen.add(value);
      }
      return seen.size >= 25;
    });
    worker.child.kill("SIGINT");
    expect(await worker.exited).toBe(130);
    expect(worker.stderr()).not.toContain("MaxListenersExceededWarning");
    expect(await client.keys("*")).toEqual([]);
  }, 120_000);
});
