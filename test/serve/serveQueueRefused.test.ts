import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LOOK_AGAIN_MS } from "../../src/serve/queue/QueueBridge.js";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { startCli, type RunningCli } from "../helpers/processTree.js";
import { hasRedis, RedisServer } from "../helpers/redisServer.js";
import { runCli } from "../helpers/runCli.js";
import { startServeCli, type ServingCli } from "../helpers/serve.js";
import { poolPackage, startHoldServer, startPoolWorker, type HoldServer } from "../helpers/servePool.js";
import { tempDir } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";

vi.setConfig({ testTimeout: 240_000 });

// `lllm serve --queue` whose live workers all refuse its tactic (they lack its package): its requests fail at once
// with each worker's reason instead of waiting for nobody (test/helpers/servePool.ts has the package `pool`).
const describeQueue = hasRedis || process.env.CI === "true" ? describe : describe.skip;
if (!hasRedis && process.env.CI !== "true") console.warn("serveQueueRefused.test.ts skipped: redis-server is not installed");

// Beats every 100 ms; one silent for 3 s (30 beats) is gone, and a refusal expires as soon (the test-facing
// LLLM_QUEUE_ALIVE_MS, instead of production's 5 s floor): above the second or two a busy machine may stall a worker.
const QUICK = { LLLM_QUEUE_HEARTBEAT_MS: "100", LLLM_QUEUE_ALIVE_MS: "3000" };
type Answer = { status: number; body: { error?: { message: string; type: string; code: string | null }; choices?: Array<{ message: { content: string } }> } };
let redis: RedisServer;
let mock: MockOpenAIServer;
let holds: HoldServer;
let pkg: string;
const started: RunningCli[] = [];

/** A chat completion for the tactic `pool`, as any HTTP client sends it: its status and its body. */
async function ask(serving: ServingCli, input: string): Promise<Answer> {
  const response = await fetch(`${serving.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${serving.token}` },
    body: JSON.stringify({ model: "pool", messages: [{ role: "user", content: input }] }),
    // Not a measure: a request left waiting for good fails the test instead of holding it up.
    signal: AbortSignal.timeout(120_000),
  });
  return { status: response.status, body: (await response.json()) as Answer["body"] };
}

/** `lllm worker` without the tactic's package (no -p, in a folder of its own: no ./lllm_packages either). */
function workerWithoutPackages(): RunningCli {
  const cli = startCli(["worker", "--queue", redis.url, "--concurrency", "2"], { cwd: tempDir(), env: QUICK });
  started.push(cli);
  return cli;
}

const servedCheck = async (): Promise<{ status: string; detail: string } | undefined> => {
  const { stdout } = await runCli(["doctor", "--queue", redis.url, "--json"], { timeoutMs: 120_000 });
  return (JSON.parse(stdout) as { checks: Array<{ name: string; status: string; detail: string }> }).checks.find((check) => check.name === "served tactics");
};

beforeEach(async () => {
  redis = await RedisServer.start();
  mock = await startMockOpenAIServer({ handler: () => "Done." });
  holds = await startHoldServer();
  pkg = poolPackage(mock.url);
});

afterEach(async () => {
  for (const cli of started.splice(0)) cli.killTree();
  await holds?.close();
  await mock?.close();
  await redis?.stop();
});

describeQueue("lllm serve --queue whose workers refuse its tactic", () => {
  it("every live worker refuses it: a waiting request and a new one get a 503 naming no worker, each worker's reason said once on the server's stderr and by lllm doctor; a worker that has it serves it", async () => {
    const serving = await startServeCli([pkg], { args: ["--queue", redis.url], env: QUICK });
    started.push(serving.cli);
    const keys = redis.client();
    // Sent while no worker is live: it waits in the queue, as before.
    const waiting = ask(serving, "first");
    waiting.catch(() => undefined); // awaited below; a test that fails first must not leave it unhandled
    expect(await waitUntil(async () => (await keys.keys("lllm:serve:waiting:*")).length === 1, 60_000)).toBe(true);
    const refusing = workerWithoutPackages();
    expect(await waitUntil(() => refusing.stderr().includes(" refused: "), 60_000), refusing.stderr()).toBe(true);
    const worker = (await keys.keys("lllm:worker:*"))[0] ?? "none";

    // The request that waited ends once the server sees that every live worker refuses its tactic.
    const first = await waiting;
    expect(first.status).toBe(503);
    expect(first.body.error).toMatchObject({ type: "server_error", code: "queue_refused" });
    // The client learns that no worker takes it now, not the pool's names (its Redis, its workers' hosts and pids).
    const message = first.body.error!.message;
    expect(message).toMatch(/^no worker of the server's queue takes this tactic now; try again later; the server's log has the details \(request chatcmpl-[0-9a-f]+\)$/);
    // The server's log has each worker's reason, under the id the client was given.
    const id = /request (chatcmpl-[0-9a-f]+)/.exec(message)![1]!;
    // The log line and the answer go by different pipes: either may come first.
    const loggedLine = () => serving.cli.stderr().split("\n").find((line) => line.includes(`request ${id} failed (queue_refused)`));
    await expect.poll(loggedLine).toBeDefined();
    const logged = loggedLine();
    expect(logged).toMatch(/every worker on redis:\/\/127\.0\.0\.1:\d+ refuses the served tactic `pool`:\\n {2}worker \S+:\d+: this worker has no package `pool`/);
    // A new one fails at once, the same way (never queued).
    const second = await ask(serving, "second");
    const secondAnswered = performance.now();
    expect(second).toMatchObject({ status: 503, body: { error: { code: "queue_refused", message: expect.stringMatching(/^no worker of the server's queue takes this tactic now; .*\(request chatcmpl-[0-9a-f]+\)$/) } } });
    expect(await keys.llen((await keys.keys("lllm:serve:waiting:*"))[0] ?? "none")).toBe(0);
    expect(mock.requests).toHaveLength(0);
    // The worker names the served tactic, not its digest, nor a batch.
    expect(refusing.stderr()).toContain("served tactic `pool` refused: this worker has no package `pool` (the served tactic `pool` is `pool.tactics:pool`)");
    expect(refusing.stderr()).not.toContain("the batch runs");
    // The server said it, once, on one line, whatever the number of its heartbeats and requests since (besides the
    // line of each failed request, under its id).
    const said = serving.cli.stderr().split("\n").filter((line) => line.includes("refuses the served tactic `pool`") && !/^lllm: warning: request \S+ failed/.test(line));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^lllm: warning: worker \S+:\d+ refuses the served tactic `pool`, and no live worker takes it \(its requests fail: 503, queue_refused\): this worker has no package `pool` \(the served tactic `pool` is `pool\.tactics:pool`\)\. Start the worker with a copy of `pool` 0\.1\.0/);
    // lllm doctor --queue sees it as the servers do: a failure.
    const refused = await servedCheck();
    expect(refused).toMatchObject({ status: "fail", detail: expect.stringContaining("pool (0 waiting, 0 running): every live worker refuses it, its requests fail (worker ") });
    expect(refused!.detail).toContain("this worker has no package `pool`");

    // A worker that has the tactic: requests wait for it and run, the refusing worker notwithstanding.
    await startPoolWorker(redis.url, pkg, { ...QUICK, HOLD_URL: holds.url }).then((cli) => started.push(cli));
    // The server looks at the workers again at most once a second (clients that retry a 503 at once must not scan
    // Redis each): a request within that second of the last refusal gets it too ("try again later"), and a worker
    // can start within it. Asked once it has passed.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, secondAnswered + LOOK_AGAIN_MS + 50 - performance.now())));
    const third = await ask(serving, "third");
    expect(third).toMatchObject({ status: 200, body: { choices: [{ message: { content: "Done." } }] } });
    expect(await servedCheck()).toMatchObject({ status: "ok", detail: "pool (0 waiting, 0 running)" });

    // The refusing worker stops: its refusal goes with it.
    expect(worker).toMatch(/^lllm:worker:/);
    expect(await keys.exists(`lllm:serve:refused:${(await keys.smembers("lllm:serve:tactics"))[0]}:${worker.slice("lllm:worker:".length)}`)).toBe(1);
    process.kill(refusing.pid, "SIGINT");
    expect(await refusing.exit(60_000)).toBe(130);
    expect(await keys.keys("lllm:serve:refused:*")).toEqual([]);
  });

  it("a refusal expires with a worker killed outright, and a worker that refuses a tactic takes it once its servers announce one it has; the provider's refusal of a request crosses the queue as a 400", async () => {
    const serving = await startServeCli([pkg], { args: ["--queue", redis.url], env: QUICK });
    started.push(serving.cli);
    const keys = redis.client();
    const killed = workerWithoutPackages();
    expect(await waitUntil(async () => (await keys.keys("lllm:serve:refused:*")).length === 1, 60_000)).toBe(true);
    expect((await ask(serving, "refused")).status).toBe(503);
    process.kill(killed.pid, "SIGKILL");
    // Its heartbeat and its refusal expire alike: nothing says the tactic is refused any more.
    expect(await waitUntil(async () => (await keys.keys("lllm:serve:refused:*")).length === 0 && (await keys.keys("lllm:worker:*")).length === 0, 60_000)).toBe(true);

    // A worker that has the package, but finds the tactic announced by a server of an older lllm (the server is
    // paused meanwhile: its heartbeat would announce it anew), refuses it; the server, back, announces it anew, and
    // the worker takes it: its refusal is gone, and requests run.
    const [digest] = await keys.smembers("lllm:serve:tactics");
    const announced = JSON.parse((await keys.get(`lllm:serve:tactic:${digest}`))!) as Record<string, unknown>;
    process.kill(serving.cli.pid, "SIGSTOP");
    try {
      // The set that lists served tactics outlives a server's last heartbeat by only two of its lives (6 s here): kept
      // too, or a worker slow to start on a busy machine finds no tactic to refuse.
      await keys.multi().set(`lllm:serve:tactic:${digest}`, JSON.stringify({ ...announced, serving: 1 }), "PX", 600_000).pexpire("lllm:serve:tactics", 600_000).exec();
      const upgraded = startCli(["worker", "--queue", redis.url, "-p", pkg], { env: { ...QUICK, HOLD_URL: holds.url } });
      started.push(upgraded);
      expect(await waitUntil(async () => (await keys.keys("lllm:serve:refused:*")).length === 1, 60_000), upgraded.stderr()).toBe(true);
      expect(upgraded.stderr()).toContain("served tactic `pool` refused: its server runs another lllm version (serving protocol 1;");
    } finally {
      process.kill(serving.cli.pid, "SIGCONT");
    }
    expect(await waitUntil(async () => (await keys.keys("lllm:serve:refused:*")).length === 0, 60_000)).toBe(true);
    expect(await ask(serving, "taken")).toMatchObject({ status: 200, body: { choices: [{ message: { content: "Done." } }] } });

    // The provider refuses the request itself (too long): through the queue, as without one, a 400 in its own words.
    mock.injectFailure({ status: 400, message: "This model's maximum context length is 8192 tokens; your messages resulted in 9120 tokens." });
    const refused = await ask(serving, "too long");
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: "invalid_request_error", code: "provider_http" });
    expect(refused.body.error!.message).toContain("the model provider refused the request (HTTP 400): This model's maximum context length is 8192 tokens");
    expect(refused.body.error!.message).not.toContain(mock.url);
  });
});
