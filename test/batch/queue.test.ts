import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { lastUserText, readResults, until } from "./batchTestHelpers.js";
import { copyPackage, describeRedis, eventually, expectedIds, itemsFile, kitSetup, okIds, QUICK, SHORT_LOCK, startBatch, startRedis, startWorker, trackQueueTests } from "./queueTestHelpers.js";

trackQueueTests();

function expectEveryItemOnce(out: string, count: number): void {
  const results = readResults(out);
  expect(results.map((line) => line.id).sort((a, b) => Number(a) - Number(b))).toEqual(expectedIds(count));
  expect(okIds(out)).toEqual(expectedIds(count));
  for (const line of results) expect(line.output).toBe(`echo: q${line.id}`);
}

describeRedis("lllm batch --queue with lllm worker", () => {
  it("with a worker connected, the batch says so instead of telling the user to start one", async () => {
    const redis = await startRedis();
    const setup = await kitSetup();
    const env = { ...setup.env, ...QUICK };
    startWorker(redis.url, env, { packages: [setup.kit] });
    const client = redis.client();
    await eventually(async () => (await client.keys("lllm:worker:*")).length === 1);
    const out = path.join(setup.dir, "out.jsonl");
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 3), "--lines", "--out", out, "--queue", redis.url, "--no-log"], env);
    expect(await producer.exited).toBe(0);
    expect(producer.stderr()).toMatch(/lllm batch: batch \w+ is on redis:\/\/127\.0\.0\.1:\d+; 1 worker is connected\n/);
    expect(producer.stderr()).not.toContain("start `lllm worker");
    expectEveryItemOnce(out, 3);
  }, 120_000);

  it("with no worker, the batch says how to start one (once it had a second to come)", async () => {
    const redis = await startRedis();
    const setup = await kitSetup();
    const env = { ...setup.env, ...QUICK };
    const out = path.join(setup.dir, "out.jsonl");
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 3), "--lines", "--out", out, "--queue", redis.url, "--no-log"], env);
    await eventually(() => producer.stderr().includes("to run its items"), { state: () => producer.stderr() });
    expect(producer.stderr()).toMatch(/lllm batch: batch \w+ is on redis:\/\/127\.0\.0\.1:\d+; start `lllm worker --queue redis:\/\/127\.0\.0\.1:\d+` \(with a copy of `kit`: -p DIR\) to run its items/);
    startWorker(redis.url, env, { packages: [setup.kit] });
    expect(await producer.exited).toBe(0);
    expectEveryItemOnce(out, 3);
  }, 120_000);

  it("two workers, one killed with SIGKILL mid-run: every item appears exactly once, and Redis is left empty", async () => {
    const redis = await startRedis();
    const setup = await kitSetup({ delayMs: 600 });
    // LLLM_QUEUE_ALIVE_MS (test-facing): the killed worker's heartbeat expires after 3 s (30 beats), not production's
    // 5 s floor, for the check that Redis is left empty.
    const env = { ...setup.env, ...QUICK, ...SHORT_LOCK, LLLM_QUEUE_ALIVE_MS: "3000" };
    const out = path.join(setup.dir, "out.jsonl");
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 60), "--lines", "--out", out, "--queue", redis.url, "--no-log"], env);
    const doomed = startWorker(redis.url, env, { packages: [setup.kit] });
    // The doomed worker holds items when it is killed; the survivor comes in meanwhile (on a busy machine a worker
    // started at the same time could join only after the other one has run every item).
    await until(() => doomed.stderr().includes("joined batch") && setup.answered() >= 6);
    // More items at once than an AbortSignal's default listener limit (10): no "possible memory leak" warning.
    const survivor = startWorker(redis.url, env, { concurrency: 16, packages: [setup.kit] });
    await until(() => survivor.stderr().includes("joined batch"));
    doomed.child.kill("SIGKILL");
    expect(await producer.exited).toBe(0);
    expect(producer.stderr()).toContain("60 ok, 0 failed");
    expectEveryItemOnce(out, 60);
    survivor.child.kill("SIGINT");
    expect(await survivor.exited).toBe(130);
    expect(survivor.stderr()).not.toContain("MaxListenersExceededWarning");
    // The batch removed its queue, jobs and announcement; the stopped worker its heartbeat. The killed worker's
    // heartbeat expires by itself.
    const client = redis.client();
    await eventually(async () => (await client.keys("*")).length === 0, { state: () => client.keys("*") });
    expect(await client.keys("*")).toEqual([]);
  }, 180_000);

  it("a worker's drain ends at --drain-timeout: its running items go back to the queue, three stops in a row use none of their attempts, and another worker runs them", async () => {
    const redis = await startRedis();
    // The model answers nothing until the gate opens: each worker's items are still running when its drain ends.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const setup = await kitSetup({ server: { handler: async (body) => (await gate, `echo: ${lastUserText(body)}`) } });
    const env = { ...setup.env, ...QUICK };
    const out = path.join(setup.dir, "out.jsonl");
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 2), "--lines", "--out", out, "--queue", redis.url, "--no-log"], env);
    // As in a rolling deploy: one worker after another is stopped while the items run (more stops than a job's
    // three attempts: a stop is not a failure).
    for (let stop = 1; stop <= 3; stop++) {
      const stopped = startWorker(redis.url, env, { packages: [setup.kit], args: ["--drain-timeout", "1"] });
      await until(() => setup.server.requests.length === 2 * stop);
      stopped.child.kill("SIGTERM");
      // No second signal: the drain's end cancels them, and the worker exits as a stopped command does.
      expect(await stopped.exited).toBe(143);
      expect(stopped.stderr()).toContain("finishing the running ones for up to 1 s");
      expect(stopped.stderr()).toContain("lllm worker: the running items did not finish within --drain-timeout (1 s): cancelling them (they go back to the queue)");
    }
    expect(readFileSync(out, "utf8")).toBe("");
    open();
    startWorker(redis.url, env, { packages: [setup.kit] });
    expect(await producer.exited).toBe(0);
    expectEveryItemOnce(out, 2);
  }, 180_000);

  it("Ctrl-C with no worker: the items no worker started are taken back at once (nothing to wait for), and a rerun runs them", async () => {
    const redis = await startRedis();
    const setup = await kitSetup();
    const env = { ...setup.env, ...QUICK };
    const out = path.join(setup.dir, "out.jsonl");
    const args = [setup.tactic, "--inputs", itemsFile(setup.dir, 3), "--lines", "--out", out, "--queue", redis.url, "--no-log"];
    const producer = startBatch(args, env);
    await until(() => producer.stderr().includes("to run its items"));
    // The progress line tells the queued items from running ones (none is: no worker took any).
    await until(() => producer.stderr().includes("0 running, 3 waiting for a worker"));
    producer.child.kill("SIGINT");
    // It waited for good for items that were only queued.
    expect(await producer.exited).toBe(130);
    expect(producer.stderr()).toContain("lllm: took back 3 items no worker had started");
    expect(producer.stderr()).toMatch(/lllm batch: 0 ok, 0 failed, 3 cancelled/);
    expect(readFileSync(out, "utf8")).toBe("");
    // The same command, with a worker this time, runs them.
    startWorker(redis.url, env, { packages: [setup.kit] });
    const rerun = startBatch(args, env);
    expect(await rerun.exited).toBe(0);
    expectEveryItemOnce(out, 3);
  }, 120_000);

  it("--drain-timeout takes a number of seconds: anything else is a usage error", async () => {
    // Refused before any connection: no Redis needed.
    const worker = startWorker("redis://127.0.0.1:1", {}, { args: ["--drain-timeout", "soon"] });
    expect(await worker.exited).toBe(2);
    expect(worker.stderr()).toContain("--drain-timeout must be a number of seconds >= 0 (got `soon`)");
  }, 60_000);

  it("Redis restarted mid-batch: the producer and the worker reconnect and finish, every item once", async () => {
    const redis = await startRedis();
    const setup = await kitSetup({ delayMs: 100 });
    const env = { ...setup.env, ...QUICK };
    const out = path.join(setup.dir, "out.jsonl");
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 40), "--lines", "--out", out, "--queue", redis.url, "--concurrency", "20", "--no-log"], env);
    const worker = startWorker(redis.url, env, { packages: [setup.kit] });
    await until(() => setup.answered() >= 10);
    await redis.stop();
    // Redis stays away until both have seen a reconnect fail: a restart quicker than ioredis's first retry (100 ms)
    // goes unnoticed (nothing was lost), and the test would then see no loss to report.
    await until(() => producer.stderr().includes("lost Redis") && worker.stderr().includes("lost Redis"));
    await redis.restart();
    expect(await producer.exited).toBe(0);
    expect(producer.stderr()).toMatch(/lost Redis at redis:\/\/127\.0\.0\.1:\d+/);
    expect(producer.stderr()).toContain("is back");
    await until(() => worker.stderr().includes("is back"));
    expectEveryItemOnce(out, 40);
  }, 180_000);

  it("a worker whose copy of the package differs refuses the batch: the producer fails at once with its reason", async () => {
    const redis = await startRedis();
    const setup = await kitSetup();
    const env = { ...setup.env, ...QUICK };
    const theirs = copyPackage(setup.kit);
    const theirTactic = path.join(theirs, "tactics", "echo.yaml");
    writeFileSync(theirTactic, readFileSync(theirTactic, "utf8").replace("Answer.", "Answer in French."));
    const worker = startWorker(redis.url, env, { packages: [theirs] });
    await until(() => worker.stderr().includes("waiting for batches"));
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 3), "--lines", "--queue", redis.url, "--no-log"], env);
    expect(await producer.exited).toBe(1);
    expect(producer.stderr()).toMatch(/every worker on redis:\/\/127\.0\.0\.1:\d+ refuses this batch/);
    expect(producer.stderr()).toContain("its tactic `kit.tactics:echo` differs from this worker's copy (kit/tactics/echo.yaml); give the worker the same version of package `kit` (1.0.0) as the machine that runs `lllm batch`");
    expect(producer.stderr()).not.toContain(theirs);
    expect(producer.stderr()).toMatch(/lllm batch: 0 ok, 0 failed, \d+ cancelled/);
    expect(producer.stdout()).toBe("");
    expect(setup.answered()).toBe(0);
  }, 120_000);

  it("a worker whose copy of the tactic holds a self-referencing alias refuses the batch and stays responsive; the submitter refuses it at the alias (issue 19 item 9)", async () => {
    const redis = await startRedis();
    const setup = await kitSetup();
    const env = { ...setup.env, ...QUICK };
    const theirs = copyPackage(setup.kit);
    const theirTactic = path.join(theirs, "tactics", "echo.yaml");
    // Parsing it once hung the worker at 100% CPU (the parse cache walked data that contained itself).
    writeFileSync(theirTactic, `${readFileSync(theirTactic, "utf8")}vars: &v {again: *v}\n`);
    const worker = startWorker(redis.url, env, { packages: [theirs] });
    const producer = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 2), "--lines", "--queue", redis.url, "--no-log"], env);
    expect(await producer.exited).toBe(1);
    expect(producer.stderr()).toMatch(/every worker on redis:\/\/127\.0\.0\.1:\d+ refuses this batch/);
    // The worker compares its copy's bytes before it parses anything: it refuses, and stays responsive.
    expect(producer.stderr()).toContain("its tactic `kit.tactics:echo` differs from this worker's copy (kit/tactics/echo.yaml); give the worker the same version of package `kit` (1.0.0) as the machine that runs `lllm batch`");
    expect(producer.stderr()).not.toContain(theirs);
    worker.child.kill("SIGINT");
    expect(await worker.exited).toBe(130);
    expect(setup.answered()).toBe(0);
    // The same alias in the submitter's tactic: refused at the alias before anything reaches Redis.
    writeFileSync(setup.tactic, readFileSync(theirTactic, "utf8"));
    const refused = startBatch([setup.tactic, "--inputs", itemsFile(setup.dir, 2), "--lines", "--queue", redis.url, "--no-log"], env);
    expect(await refused.exited).toBe(2);
    expect(refused.stderr()).toMatch(/echo\.yaml:\d+:\d+: the alias `\*v` is inside the value its anchor names/);
  }, 120_000);
});
