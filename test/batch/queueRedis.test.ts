import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { freePort } from "../helpers/freePort.js";
import { readResults, wholeLines } from "./batchTestHelpers.js";
import { describeRedis, eventually, itemsFile, kitSetup, QUICK, startBatch, startRedis, startWorker, trackQueueTests } from "./queueTestHelpers.js";

trackQueueTests();

/** A URL where nothing listens. */
async function deadUrl(): Promise<string> {
  return `redis://127.0.0.1:${await freePort()}`;
}

describeRedis("Redis unreachable, lost, or refusing the password", () => {
  it("batch with no Redis says so at once, ends on Ctrl-C while it tries, and gives up with exit 1 after LLLM_QUEUE_RECONNECT_MS", async () => {
    const setup = await kitSetup();
    const url = await deadUrl();
    const args = [setup.tactic, "--inputs", itemsFile(setup.dir, 3), "--lines", "--queue", url, "--no-log"];
    const waiting = startBatch(args, { ...setup.env, ...QUICK, LLLM_QUEUE_RECONNECT_MS: "600000" });
    await eventually(() => waiting.stderr().includes(`cannot reach Redis at ${url} (connect ECONNREFUSED`));
    expect(waiting.stderr()).toContain("trying again for up to 600 s");
    waiting.child.kill("SIGINT");
    expect(await waiting.exited).toBe(130);

    const giving = startBatch(args, { ...setup.env, ...QUICK, LLLM_QUEUE_RECONNECT_MS: "300" });
    expect(await giving.exited).toBe(1);
    expect(giving.stderr()).toContain(`lllm: error: cannot reach Redis at ${url} (tried for 0.3 s): connect ECONNREFUSED`);
    expect(giving.stderr()).toContain("LLLM_QUEUE_RECONNECT_MS");
    expect(giving.stdout()).toBe("");
  }, 60_000);

  it("worker with no Redis says so at once, ends on Ctrl-C, and gives up with exit 1 after LLLM_QUEUE_RECONNECT_MS", async () => {
    const setup = await kitSetup();
    const url = await deadUrl();
    const waiting = startWorker(url, { ...setup.env, ...QUICK, LLLM_QUEUE_RECONNECT_MS: "600000" });
    await eventually(() => waiting.stderr().includes(`cannot reach Redis at ${url}`));
    waiting.child.kill("SIGINT");
    expect(await waiting.exited).toBe(130);

    const giving = startWorker(url, { ...setup.env, ...QUICK, LLLM_QUEUE_RECONNECT_MS: "300" });
    expect(await giving.exited).toBe(1);
    expect(giving.stderr()).toContain(`lllm: error: cannot reach Redis at ${url} (tried for 0.3 s)`);
  }, 60_000);

  it("Redis killed mid-run: producer and worker say so at once and exit 1 after LLLM_QUEUE_RECONNECT_MS; the results so far are kept", async () => {
    const redis = await startRedis();
    const setup = await kitSetup({ delayMs: 100 });
    const env = { ...setup.env, ...QUICK, LLLM_QUEUE_RECONNECT_MS: "1500" };
    const out = path.join(setup.dir, "out.jsonl");
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 60), "--lines", "--out", out, "--queue", redis.url, "--concurrency", "8", "--no-log"], env);
    const worker = startWorker(redis.url, env, { packages: [setup.kit], concurrency: 2 });
    await eventually(() => wholeLines(out) >= 5);
    await redis.stop();
    expect(await producer.exited).toBe(1);
    expect(producer.stderr()).toContain(`lost Redis at ${redis.url}`);
    expect(producer.stderr()).toContain(`lllm: error: lost Redis at ${redis.url} and could not reach it again within 1.5 s`);
    expect(producer.stderr()).toContain("cancelled");
    expect(await worker.exited).toBe(1);
    expect(worker.stderr()).toContain(`lost Redis at ${redis.url}`);
    // The worker's two links (batches, served requests) both lost it; it says so once.
    expect(worker.stderr().split(`lost Redis at ${redis.url} (`).length - 1).toBe(1);
    const results = readResults(out);
    expect(results.length).toBeGreaterThanOrEqual(5);
    expect(results.length).toBeLessThan(60);
    expect(results.every((line) => line.status === "ok")).toBe(true);
  }, 120_000);

  it("Ctrl-C ends a worker while Redis is down, with items of a batch in hand", async () => {
    const redis = await startRedis();
    const setup = await kitSetup({ delayMs: 100 });
    const env = { ...setup.env, ...QUICK, LLLM_QUEUE_RECONNECT_MS: "600000" };
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 200), "--lines", "--queue", redis.url, "--no-log"], env);
    const worker = startWorker(redis.url, env, { packages: [setup.kit] });
    await eventually(() => setup.answered() >= 5);
    await redis.stop();
    await eventually(() => worker.stderr().includes("lost Redis"));
    worker.child.kill("SIGINT");
    expect(await worker.exited).toBe(130);
    await eventually(() => producer.stderr().includes("lost Redis"));
    producer.child.kill("SIGINT");
    await eventually(() => producer.stderr().includes("no new items"));
    producer.child.kill("SIGINT");
    expect(await producer.exited).toBe(130);
  }, 120_000);

  it("a password in the URL is never printed nor stored: every message masks it, and the batch runs", async () => {
    const password = "s3cret-Pa55word-q";
    const redis = await startRedis({ password });
    const setup = await kitSetup();
    const env = { ...setup.env, ...QUICK };
    const out = path.join(setup.dir, "out.jsonl");
    // The worker comes after the batch has said how to start one (it says so when none is connected).
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 3), "--lines", "--out", out, "--queue", redis.url], env);
    await eventually(() => producer.stderr().includes("to run its items"), { state: () => producer.stderr() });
    const worker = startWorker(redis.url, env, { packages: [setup.kit], log: true });
    expect(await producer.exited).toBe(0);
    worker.child.kill("SIGINT");
    expect(await worker.exited).toBe(130);
    const masked = `redis://[redacted]@127.0.0.1:${redis.port}`;
    expect(producer.stderr()).toContain(`is on ${masked}; start \`lllm worker --queue ${masked}\``);
    expect(worker.stderr()).toContain(`waiting for batches and served requests on ${masked}`);
    for (const text of [producer.stderr(), producer.stdout(), worker.stderr(), worker.stdout(), readFileSync(out, "utf8")]) expect(text).not.toContain(password);
    // The run log of the worker's items (and the producer's home) hold no trace of it either.
    for (const file of readdirSync(setup.env.LLLM_HOME!, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile())) {
      expect(readFileSync(path.join(file.parentPath, file.name)).includes(password)).toBe(false);
    }
  }, 120_000);

  it("a wrong or missing password: batch and worker say that Redis refuses it, at once, exit 1, without echoing it", async () => {
    const redis = await startRedis({ password: "the-right-password" });
    const setup = await kitSetup();
    const env = { ...setup.env, ...QUICK, LLLM_QUEUE_RECONNECT_MS: "600000" };
    const wrong = `redis://:wrong-password-here@127.0.0.1:${redis.port}`;
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 3), "--lines", "--queue", wrong, "--no-log"], env);
    expect(await producer.exited).toBe(1);
    expect(producer.stderr()).toContain(`lllm: error: Redis at redis://[redacted]@127.0.0.1:${redis.port} refuses the password (WRONGPASS)`);
    expect(producer.stderr()).toContain("redis://:PASSWORD@host:port");
    expect(producer.stderr()).not.toContain("internal error");
    expect(producer.stderr()).not.toContain("wrong-password-here");
    const worker = startWorker(wrong, env);
    expect(await worker.exited).toBe(1);
    expect(worker.stderr()).toContain("refuses the password (WRONGPASS)");
    expect(worker.stderr()).not.toContain("wrong-password-here");
    const anonymous = startWorker(`redis://127.0.0.1:${redis.port}`, env);
    expect(await anonymous.exited).toBe(1);
    expect(anonymous.stderr()).toContain(`lllm: error: Redis at redis://127.0.0.1:${redis.port} needs a password`);
  }, 60_000);
});
