import OpenAI from "openai";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody, type ScriptedTurn } from "../../src/testing/index.js";
import type { RunningCli } from "../helpers/processTree.js";
import { hasRedis, RedisServer } from "../helpers/redisServer.js";
import { runCli } from "../helpers/runCli.js";
import { startServeCli, type ServingCli } from "../helpers/serve.js";
import { poolPackage, startHoldServer, startPoolWorker, type HoldServer } from "../helpers/servePool.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { RunStore } from "../../src/store/RunStore.js";
import { tempDir } from "../helpers/tempTree.js";
import { markWorkerAlive } from "../../src/batch/queue/queueConnection.js";
import { serverChannel, settledKey, type ServedJob, type SettledRecord } from "../../src/serve/queue/serveQueueWire.js";
import { toWire } from "../../src/serve/queue/wireRecordedRun.js";
import type { TacticResult } from "../../src/tactics/TacticRun.js";

vi.setConfig({ testTimeout: 240_000 });

// `lllm serve --queue` with `lllm worker`s, as users run them, with the openai SDK as the client. The tactic's
// model is the mock; its tool `hold` waits until the test releases it (test/helpers/servePool.ts).
const describeQueue = hasRedis || process.env.CI === "true" ? describe : describe.skip;
if (!hasRedis && process.env.CI !== "true") console.warn("serveQueue.test.ts skipped: redis-server is not installed");

type WireMessage = { role: string; content?: string | null };
// Beats every 100 ms; one silent for 3 s (30 beats) is gone, instead of the 5 s floor production keeps (the
// test-facing LLLM_QUEUE_ALIVE_MS): the tests of a worker or server found gone, and of keys that expire, wait less.
// Not shorter: a busy machine can hold a worker's event loop up for a second or two (loading a tool's module).
const QUICK = { LLLM_QUEUE_HEARTBEAT_MS: "100", LLLM_QUEUE_ALIVE_MS: "3000" };
let redis: RedisServer;
let mock: MockOpenAIServer;
let holds: HoldServer;
let pkg: string;
let answer: (body: MockRequestBody) => ScriptedTurn | Promise<ScriptedTurn>;
const started: RunningCli[] = [];

const lastOf = (body: MockRequestBody): WireMessage => (body.messages as WireMessage[]).at(-1)!;
const userOf = (body: MockRequestBody): string => (body.messages as WireMessage[]).find((message) => message.role === "user")!.content!;

/** `talky N` says something, then holds; `quiet N` holds without a word; after the hold, both answer `Done N.` */
const holdingModel = (body: MockRequestBody): ScriptedTurn => {
  const tag = userOf(body);
  if (lastOf(body).role === "tool") return `Done ${tag}.`;
  return tag.startsWith("talky") ? { text: "Part one. ", tool_calls: [{ name: "hold", arguments: { tag } }] } : { tool_calls: [{ name: "hold", arguments: { tag } }] };
};

async function serveOnQueue(env: NodeJS.ProcessEnv = {}): Promise<ServingCli> {
  const serving = await startServeCli([pkg], { args: ["--queue", redis.url, "--concurrency", "64"], env: { ...QUICK, ...env } });
  started.push(serving.cli);
  return serving;
}

async function worker(concurrency = 4, env: NodeJS.ProcessEnv = {}, args: string[] = []): Promise<RunningCli> {
  const cli = await startPoolWorker(redis.url, pkg, { ...QUICK, HOLD_URL: holds.url, ...env }, concurrency, args);
  started.push(cli);
  return cli;
}

const client = (serving: ServingCli): OpenAI => new OpenAI({ baseURL: `${serving.url}/v1`, apiKey: serving.token!, maxRetries: 0 });

/** A streamed chat completion: what it said, and how it ended (`done`, or the error's message). */
async function stream(serving: ServingCli, input: string, signal?: AbortSignal, seen?: { text: string }): Promise<{ text: string; end: string }> {
  let text = "";
  try {
    const chunks = await client(serving).chat.completions.create({ model: "pool", messages: [{ role: "user", content: input }], stream: true }, { signal });
    for await (const chunk of chunks) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (seen) seen.text = text;
    }
    return { text, end: "done" };
  } catch (error) {
    return { text, end: (error as Error).message };
  }
}

beforeEach(async () => {
  redis = await RedisServer.start();
  mock = await startMockOpenAIServer({ handler: (body) => answer(body) });
  holds = await startHoldServer();
  pkg = poolPackage(mock.url);
  answer = holdingModel;
});

afterEach(async () => {
  for (const cli of started.splice(0)) cli.killTree();
  await holds?.close();
  await mock?.close();
  await redis?.stop();
});

describeQueue("lllm serve --queue with lllm workers", () => {
  it("streams through two workers; one SIGKILLed mid-stream: its streamed requests end with a clear error, the others are retried and complete", async () => {
    const serving = await serveOnQueue();
    const tags = ["talky 1", "quiet 1", "talky 2", "quiet 2", "talky 3", "quiet 3", "talky 4", "quiet 4"];
    // The first two go to the first worker alone, so that it holds both kinds whichever way the rest are shared (the
    // server queues a turn's requests together, and two idle workers may then take them turn about).
    const first = await worker();
    const requests = tags.slice(0, 2).map((tag) => stream(serving, tag));
    expect(await waitUntil(() => holds.held.size === 2, 120_000)).toBe(true);
    const second = await worker();
    requests.push(...tags.slice(2).map((tag) => stream(serving, tag)));
    expect(await waitUntil(() => holds.held.size === tags.length, 120_000)).toBe(true);
    // Both workers hold some (4 each at --concurrency 4).
    const byWorker = (pid: number): string[] => tags.filter((tag) => holds.held.get(tag) === pid);
    expect(byWorker(first.pid).length).toBeGreaterThan(0);
    expect(byWorker(second.pid).length).toBeGreaterThan(0);
    // Kill the one that holds both kinds: a request that streamed, and one that did not yet.
    const mixed = (pid: number): boolean => byWorker(pid).some((tag) => tag.startsWith("talky")) && byWorker(pid).some((tag) => tag.startsWith("quiet"));
    const [victim, survivor] = mixed(first.pid) ? [first, second] : [second, first];
    expect(mixed(victim.pid)).toBe(true);
    const killed = byWorker(victim.pid);
    process.kill(victim.pid, "SIGKILL");
    holds.release("released");
    const results = await Promise.all(requests);
    const outcome = Object.fromEntries(tags.map((tag, index) => [tag, results[index]!]));
    for (const tag of tags) {
      const { text, end } = outcome[tag]!;
      if (tag.startsWith("talky") && killed.includes(tag)) {
        // Part of its answer had reached the client: it cannot be run again unseen.
        expect(text).toBe("Part one. ");
        expect(end).toContain("stopped before the answer was complete");
      } else {
        // Nothing had reached the client (or its worker lived): it completed, on the live worker.
        expect(end, tag).toBe("done");
        expect(text).toBe(`${tag.startsWith("talky") ? "Part one. " : ""}Done ${tag}.`);
        // The killed worker's quiet requests ran again, on the live one.
        expect(holds.held.get(tag)).toBe(survivor.pid);
      }
    }
    expect(survivor.stderr()).not.toMatch(/internal error|TypeError/);
  });

  it("a run's end whose message never reached its server (pub/sub delivers at most once) is read where its worker kept it", async () => {
    const serving = await serveOnQueue();
    // A live worker that takes the job and says it started; its end is kept, but its message is lost on the way.
    const keys = redis.client();
    const me = "lossy-worker:1";
    await markWorkerAlive(keys, me, 120_000);
    let job: ServedJob | undefined;
    const asked = client(serving).chat.completions.create({ model: "pool", messages: [{ role: "user", content: "quiet 9" }] }, { timeout: 60_000 });
    expect(
      await waitUntil(async () => {
        for (const key of await keys.keys("lllm:serve:waiting:*")) {
          const text = await keys.rpop(key);
          if (text) job = JSON.parse(text) as ServedJob;
        }
        return job !== undefined;
      }, 60_000),
    ).toBe(true);
    const run = job!.runKey;
    await keys.publish(serverChannel(job!.server), JSON.stringify({ run, type: "started", worker: me, seq: 1 }));
    const usage = { promptTokens: 3, completionTokens: 4, totalTokens: 7, llmCalls: 1, cachedPromptTokens: 0, reasoningTokens: 0 };
    const end: SettledRecord = { worker: me, server: job!.server, event: { run, type: "finished", seq: 2, result: toWire({ ok: true, result: { output: "Kept, never sent." } as TacticResult, summary: "", usage, cost: null }), state: { lastText: "Kept, never sent.", streamedSinceCall: "", usage: { promptTokens: 3, completionTokens: 4 } } } };
    await keys.set(settledKey(run), JSON.stringify(end), "PX", 60_000);
    const answer = await asked;
    expect(answer.choices[0]!.message.content).toBe("Kept, never sent.");
    await keys.del(`lllm:worker:${me}`);
  });

  it.each([
    ["Ctrl-C", "SIGINT", 130],
    ["SIGTERM (a supervisor's stop, as in a rolling deploy)", "SIGTERM", 143],
  ] as const)("a worker stopped with %s finishes the requests it runs, and the server waits for them", async (_how, signal, code) => {
    const serving = await serveOnQueue();
    const only = await worker();
    const requests = ["talky 7", "quiet 7"].map((tag) => stream(serving, tag));
    expect(await waitUntil(() => holds.held.size === 2, 120_000)).toBe(true);
    process.kill(only.pid, signal);
    expect(await waitUntil(() => only.stderr().includes("taking no new items"), 60_000), only.stderr()).toBe(true);
    // Three of the server's heartbeats later (each writes the time into its key, and looks at the workers), the
    // stopping worker still counts as alive: its requests are not lost.
    const keys = redis.client();
    const [serverKey] = await keys.keys("lllm:serve:server:*");
    for (let beat = 0; beat < 3; beat++) {
      const seen = await keys.get(serverKey!);
      expect(await waitUntil(async () => (await keys.get(serverKey!)) !== seen, 60_000)).toBe(true);
    }
    expect(await keys.keys("lllm:worker:*")).toHaveLength(1);
    holds.release("released");
    expect(await Promise.all(requests)).toEqual([
      { text: "Part one. Done talky 7.", end: "done" },
      { text: "Done quiet 7.", end: "done" },
    ]);
    // Each ran once, on that worker: two model calls each.
    expect(mock.requests.map((request) => userOf(request.body)).sort()).toEqual(["quiet 7", "quiet 7", "talky 7", "talky 7"]);
    // Stopped by the signal (128 + its number), as any command, once they are done.
    expect(await only.exit(60_000)).toBe(code);
    expect(only.stderr()).toContain("lllm worker: stopped after 0 items and 2 served requests");
  });

  it("a worker's drain ends at --drain-timeout: a request that sent nothing yet runs on another worker at once, one that streamed ends with a 502", async () => {
    const serving = await serveOnQueue();
    const first = await worker(4, {}, ["--drain-timeout", "1"]);
    const requests = ["talky 12", "quiet 12"].map((tag) => stream(serving, tag));
    expect(await waitUntil(() => holds.held.size === 2, 120_000)).toBe(true);
    process.kill(first.pid, "SIGTERM");
    expect(await waitUntil(() => first.stderr().includes("finishing the running ones for up to 1 s"), 60_000), first.stderr()).toBe(true);
    // No second signal: the drain's end cancels both runs, and the worker exits as a stopped command does.
    expect(await first.exit(60_000), first.stderr()).toBe(143);
    expect(first.stderr()).toContain("lllm worker: the running items did not finish within --drain-timeout (1 s): cancelling them (they go back to the queue)");
    expect([...holds.aborted].sort()).toEqual(["quiet 12", "talky 12"]);
    // The one that had streamed ends at once, without waiting for the stopped worker's heartbeat to expire.
    // The client is not told which worker it was (its host and pid): the server's log is.
    expect(await requests[0]).toEqual({ text: "Part one. ", end: expect.stringMatching(/^the worker running this request stopped before the answer was complete \(10 characters of it had been sent\); send the request again; the server's log has the details \(request chatcmpl-[0-9a-f]+\)$/) });
    await expect.poll(() => serving.cli.stderr()).toMatch(/request chatcmpl-[0-9a-f]+ failed \(serve_worker_lost\): the worker running this request \(\S+:\d+\) stopped/);
    // The other waits in the queue for a worker, and runs there from its start.
    const second = await worker();
    expect(await waitUntil(() => holds.held.get("quiet 12") === second.pid, 120_000)).toBe(true);
    holds.release("released");
    expect(await requests[1]).toEqual({ text: "Done quiet 12.", end: "done" });
    expect(mock.requests.map((request) => userOf(request.body)).sort()).toEqual(["quiet 12", "quiet 12", "quiet 12", "talky 12"]);
  });

  it("a draining worker keeps its list of running requests alive, and still stops a run whose server died", async () => {
    const serving = await serveOnQueue();
    const only = await worker();
    void stream(serving, "quiet 11");
    expect(await waitUntil(() => holds.held.has("quiet 11"), 120_000)).toBe(true);
    process.kill(only.pid, "SIGTERM");
    expect(await waitUntil(() => only.stderr().includes("taking no new items"), 60_000), only.stderr()).toBe(true);
    // The list where the worker keeps the jobs it runs (servers take a dead worker's jobs back from it) is renewed
    // each heartbeat while it drains: else it would expire under a drain longer than its time to live.
    const keys = redis.client();
    const [list] = await keys.keys("lllm:serve:running:*");
    expect(list).toBeDefined();
    const first = await keys.pttl(list!);
    expect(first).toBeGreaterThan(0);
    // Lower than it was (time went by), then higher again (renewed): never renewed, it only goes down.
    let lower = first;
    expect(await waitUntil(async () => (lower = await keys.pttl(list!)) < first, 60_000)).toBe(true);
    expect(await waitUntil(async () => (await keys.pttl(list!)) > lower, 60_000)).toBe(true);
    // Its server dies: the run nobody waits for is stopped, and the worker, drained, exits.
    process.kill(serving.cli.pid, "SIGKILL");
    expect(await waitUntil(() => holds.aborted.has("quiet 11"), 60_000)).toBe(true);
    expect(await only.exit(60_000), only.stderr()).toBe(143);
  });

  it("a server whose Redis stays away past the reconnect window stops, failing, and its request in flight ends", async () => {
    const serving = await serveOnQueue({ LLLM_QUEUE_RECONNECT_MS: "1500" });
    await worker();
    const seen = { text: "" };
    const request = stream(serving, "talky 8", undefined, seen);
    expect(await waitUntil(() => holds.held.size === 1, 120_000)).toBe(true);
    // The text said before the tool call has reached the client (its way through Redis takes its time on a busy machine).
    expect(await waitUntil(() => seen.text === "Part one. ", 60_000), seen.text).toBe(true);
    await redis.stop();
    expect(await serving.cli.exit(60_000), serving.cli.stderr()).toBe(1);
    expect(serving.cli.stderr()).toMatch(/lost Redis at redis:\/\/127\.0\.0\.1:\d+ and could not reach it again within 1\.5 s/);
    // The client hears of it, and waits no more; the queue's address stays in the server's log.
    expect(await request).toEqual({ text: "Part one. ", end: expect.stringMatching(/^the server's queue cannot be reached; try again later; the server's log has the details \(request chatcmpl-[0-9a-f]+\)$/) });
  });

  it("a request waiting in the queue when Redis restarts empty is queued again, and runs once", async () => {
    const serving = await serveOnQueue();
    answer = () => "Answered after the restart.";
    const request = client(serving).chat.completions.create({ model: "pool", messages: [{ role: "user", content: "quiet 12" }] }, { timeout: 120_000 });
    const keys = redis.client();
    expect(await waitUntil(async () => (await keys.keys("lllm:serve:waiting:*")).length === 1, 60_000)).toBe(true);
    // No persistence: the list, the announcement and every other key are gone.
    await redis.stop();
    await redis.restart();
    await Promise.all([worker(), worker()]);
    const answered = await request;
    expect(answered.choices[0]!.message.content).toBe("Answered after the restart.");
    // Run once, by one of the two workers.
    expect(mock.requests.map((sent) => userOf(sent.body))).toEqual(["quiet 12"]);
  });

  it.each([
    ["the server beats faster (it would take the worker for gone)", "100", "1000"],
    ["the worker beats faster (it would take the server for gone)", "1000", "100"],
  ] as const)("a request running when Redis restarts empty goes on to its end, run once: %s", async (_how, serverBeat, workerBeat) => {
    // The production rule for how long a silent side is gone (10 beats, at least 5 s), not the tests' shorter one.
    const serving = await serveOnQueue({ LLLM_QUEUE_HEARTBEAT_MS: serverBeat, LLLM_QUEUE_ALIVE_MS: undefined });
    const only = await worker(4, { LLLM_QUEUE_HEARTBEAT_MS: workerBeat, LLLM_QUEUE_ALIVE_MS: undefined });
    const request = stream(serving, "quiet 13");
    expect(await waitUntil(() => holds.held.has("quiet 13"), 120_000)).toBe(true);
    await redis.stop();
    const restarted = Date.now();
    await redis.restart();
    // Both sides wait a while (10 of their heartbeats, at least 5 s) before they take the other for gone again: past
    // that, as the server's key says (each heartbeat writes its time there), the request is still running.
    const keys = redis.client();
    const slowest = Math.max(Number(serverBeat), Number(workerBeat));
    const serverTime = async (): Promise<number> => {
      const [key] = await keys.keys("lllm:serve:server:*");
      return key === undefined ? 0 : Number(await keys.get(key));
    };
    expect(await waitUntil(async () => (await serverTime()) > restarted + Math.max(10 * slowest, 5000) + 3 * slowest, 120_000)).toBe(true);
    expect(holds.aborted.has("quiet 13"), only.stderr()).toBe(false);
    expect(await keys.keys("lllm:serve:running:*")).toHaveLength(1);
    holds.release("released");
    expect(await request).toEqual({ text: "Done quiet 13.", end: "done" });
    // Its two model calls, once: not run again by a server that took its worker for gone.
    expect(mock.requests.map((sent) => userOf(sent.body))).toEqual(["quiet 13", "quiet 13"]);
  });

  it("a client that disconnects cancels its run on the worker", async () => {
    const serving = await serveOnQueue();
    await worker();
    const controller = new AbortController();
    const request = stream(serving, "talky 9", controller.signal);
    expect(await waitUntil(() => holds.held.has("talky 9"), 60_000)).toBe(true);
    controller.abort();
    await request;
    expect(await waitUntil(() => holds.aborted.has("talky 9"), 60_000)).toBe(true);
  });

  it("a server that dies: its worker stops the run nobody waits for", async () => {
    const serving = await serveOnQueue();
    await worker();
    void stream(serving, "quiet 7");
    expect(await waitUntil(() => holds.held.has("quiet 7"), 60_000)).toBe(true);
    process.kill(serving.cli.pid, "SIGKILL");
    expect(await waitUntil(() => holds.aborted.has("quiet 7"), 60_000)).toBe(true);
  });

  it("a job a worker took and died with before it said so goes back to the queue and completes on another worker", async () => {
    const serving = await serveOnQueue();
    const keys = redis.client();
    const asked = stream(serving, "quiet 9");
    expect(await waitUntil(async () => (await keys.keys("lllm:serve:waiting:*")).length === 1 && (await keys.llen((await keys.keys("lllm:serve:waiting:*"))[0]!)) === 1, 60_000)).toBe(true);
    // A worker that took the job (as a worker takes one) and was killed before it said so: no heartbeat, its list left.
    const [waiting] = await keys.keys("lllm:serve:waiting:*");
    const digest = waiting!.slice("lllm:serve:waiting:".length);
    const deadList = `lllm:serve:running:${digest}:gone-host:4242`;
    expect(await keys.lmove(waiting!, deadList, "RIGHT", "LEFT")).toContain('"input":"quiet 9"');
    // The server takes it back from the dead worker's list and queues it again, where a live worker runs it.
    expect(await waitUntil(async () => (await keys.llen(deadList)) === 0 && (await keys.llen(waiting!)) === 1, 60_000)).toBe(true);
    await worker();
    holds.release("released");
    expect(await asked).toEqual({ text: "Done quiet 9.", end: "done" });
    expect(mock.requests.map((request) => userOf(request.body))).toEqual(["quiet 9", "quiet 9"]);
  });

  it("a server and a worker of another lllm version say so, instead of waiting for each other in silence", async () => {
    const keys = redis.client();
    // A live worker of an lllm from before serving protocol 2: its mark says no protocol.
    await keys.set("lllm:worker:old-host:77", JSON.stringify({ host: "old-host", pid: 77, at: Date.now() }), "PX", 600_000);
    const serving = await serveOnQueue({ LLLM_QUEUE_NO_WORKER_MS: "0" });
    expect(await waitUntil(() => serving.cli.stderr().includes("another lllm version"), 60_000), serving.cli.stderr()).toBe(true);
    expect(serving.cli.stderr()).toContain(`the one \`lllm worker\` connected to ${redis.url} runs another lllm version (serving protocol 1 (an lllm from before protocol 2); this server's: 2) and never takes its requests, which wait in the queue: give the servers and workers of a queue the same lllm version`);
    // A server of such an lllm: its tactic's announcement says no protocol either. A worker refuses it, saying why.
    const [announced] = await keys.keys("lllm:serve:tactic:*");
    const { serving: protocol, ...older } = JSON.parse((await keys.get(announced!))!) as { serving?: number };
    expect(protocol).toBe(2);
    await keys.set("lllm:serve:tactic:olddigest", JSON.stringify(older), "PX", 600_000);
    await keys.sadd("lllm:serve:tactics", "olddigest");
    const current = await worker();
    expect(await waitUntil(() => current.stderr().includes("served tactic `pool` refused"), 60_000), current.stderr()).toBe(true);
    expect(current.stderr()).toContain("served tactic `pool` refused: its server runs another lllm version (serving protocol 1, from before protocol 2; this worker's: 2): give the servers and workers of a queue the same lllm version");
    // That server is upgraded: the same tactic, announced by this version. The worker looks again and serves it too.
    const joins = (): number => current.stderr().split("lllm worker: serving").length - 1;
    const before = joins();
    await keys.set("lllm:serve:tactic:olddigest", JSON.stringify({ ...older, serving: 2 }), "PX", 600_000);
    expect(await waitUntil(() => joins() === before + 1, 60_000), current.stderr()).toBe(true);
    expect(current.stderr().split("served tactic `pool` refused").length - 1).toBe(1);
    // The worker of this version serves this server all the same.
    holds.release("released");
    expect(await stream(serving, "quiet 5")).toEqual({ text: "Done quiet 5.", end: "done" });
  });

  it("stopped worker first, then server: nothing of them is left in Redis once their keys' time is up", async () => {
    const serving = await serveOnQueue();
    const only = await worker();
    holds.release("released");
    expect(await stream(serving, "quiet 13")).toEqual({ text: "Done quiet 13.", end: "done" });
    process.kill(only.pid, "SIGINT");
    expect(await only.exit(60_000)).toBe(130);
    process.kill(serving.cli.pid, "SIGINT");
    expect(await serving.cli.exit(60_000)).toBe(0);
    const keys = redis.client();
    expect(await waitUntil(async () => (await keys.keys("lllm:*")).length === 0, 60_000), JSON.stringify(await keys.keys("lllm:*"))).toBe(true);
  });

  it("a worker lets go of a tactic no server announces any more, and takes it again when one does", async () => {
    const first = await serveOnQueue();
    const only = await worker();
    process.kill(first.cli.pid, "SIGINT");
    expect(await first.cli.exit(60_000)).toBe(0);
    // Its announcement expires a while after the server's last heartbeat: the worker's blocking connection for it goes.
    expect(await waitUntil(() => only.stderr().includes("lllm worker: no longer serving pool (no server announces it)"), 60_000), only.stderr()).toBe(true);
    expect(await redis.client().smembers("lllm:serve:tactics")).toEqual([]);
    const second = await serveOnQueue();
    expect(await waitUntil(() => only.stderr().split("lllm worker: serving pool").length - 1 === 2, 60_000), only.stderr()).toBe(true);
    holds.release("released");
    expect(await stream(second, "quiet 4")).toEqual({ text: "Done quiet 4.", end: "done" });
  });

  it("a worker keeps its environment's credentials out of the records of every run it serves", async () => {
    const secret = "pool-svc-93be71d0c4";
    answer = () => `Served with ${secret}.`;
    const serving = await serveOnQueue();
    const home = tempDir("lllm-worker-home-");
    await worker(4, { LLLM_HOME: home, POOL_SERVICE_TOKEN: secret });
    for (const tag of ["first", "second"]) {
      const completion = await client(serving).chat.completions.create({ model: "pool", messages: [{ role: "user", content: `${tag} ${secret}` }] });
      expect(completion.choices[0]!.message.content).toContain("Served with");
    }
    const store = RunStore.openSync(path.join(home, "logs.db"));
    try {
      const runs = store.listRuns({ limit: 10 });
      expect(runs.map((run) => run.status)).toEqual(["ok", "ok"]);
      for (const run of runs) {
        const record = JSON.stringify(store.getRun(run.id));
        // Its input and its answer are in the record, the token in neither.
        expect(record).not.toContain(secret);
        expect(record.split("[redacted]").length).toBeGreaterThan(2);
      }
    } finally {
      store.close();
    }
  });

  it("a client's tool round trip works when its next request lands on another server process; the user's image reaches the model through the queue", async () => {
    answer = (body) => {
      const last = lastOf(body);
      if (last.role === "tool") return `Your cart: ${last.content!.split("\n")[2]}`;
      return { tool_calls: [{ name: "add_to_cart", arguments: { item: "pear" } }] };
    };
    const one = await serveOnQueue();
    const other = await serveOnQueue();
    await worker();
    const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "add_to_cart", description: "Add an item", parameters: { type: "object", properties: { item: { type: "string" } } } } }];
    const image = { type: "image_url" as const, image_url: { url: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==" } };
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: [{ type: "text", text: "Put this in my cart" }, image] }];
    const paused = await client(one).chat.completions.create({ model: "pool", messages, tools });
    expect((mock.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>).find((message) => message.role === "user")!.content).toEqual([{ type: "text", text: "Put this in my cart" }, image]);
    const call = paused.choices[0]!.message.tool_calls![0]!;
    expect(paused.choices[0]!.finish_reason).toBe("tool_calls");
    const modelCalls = mock.requests.length;
    const done = await client(other).chat.completions.create({ model: "pool", tools, messages: [...messages, paused.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "pear added" }] });
    expect(done.choices[0]!.message.content).toBe("Your cart: pear added");
    // The same run went on (one more model call, seeing the result), not a new one from the start.
    expect(mock.requests.length).toBe(modelCalls + 1);
  });

  it("a client's tool results sent after the server its run paused on stopped get a 400 from another server, not a wait", async () => {
    answer = () => ({ tool_calls: [{ name: "add_to_cart", arguments: { item: "fig" } }] });
    const one = await serveOnQueue();
    const other = await serveOnQueue();
    await worker();
    const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "add_to_cart", description: "Add an item", parameters: { type: "object", properties: { item: { type: "string" } } } } }];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Put a fig in my cart" }];
    const paused = await client(one).chat.completions.create({ model: "pool", messages, tools });
    const call = paused.choices[0]!.message.tool_calls![0]!;
    // The first server stops: the run that waits for the client's results ends on the worker.
    process.kill(one.cli.pid, "SIGINT");
    expect(await one.cli.exit(60_000)).toBe(0);
    const late = client(other).chat.completions.create({ model: "pool", tools, messages: [...messages, paused.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "fig added" }] }, { timeout: 60_000 });
    await expect(late).rejects.toMatchObject({ status: 400, code: "tool_call_not_found" });
  });

  it("/metrics shows the queue's depth and its workers; lllm doctor --queue checks the pool; a request withdrawn before a worker took it never runs", async () => {
    const serving = await serveOnQueue();
    const metrics = async (): Promise<string> => (await fetch(`${serving.url}/metrics`, { headers: { authorization: `Bearer ${serving.token}` } })).text();
    const doctor = async (): Promise<Array<{ name: string; status: string; detail: string }>> => (JSON.parse((await runCli(["doctor", "--queue", redis.url, "--json"], { timeoutMs: 120_000 })).stdout) as { checks: Array<{ name: string; status: string; detail: string }> }).checks;
    const waiting = [stream(serving, "quiet 1"), stream(serving, "quiet 2")];
    const gone = new AbortController();
    const withdrawn = stream(serving, "quiet 3", gone.signal);
    expect(await waitUntil(async () => (await metrics()).includes('lllm_serve_queue_jobs{state="waiting"} 3'), 60_000)).toBe(true);
    // Its client hangs up while no worker is there: the request leaves the queue.
    gone.abort();
    expect((await withdrawn).text).toBe("");
    expect(await waitUntil(async () => (await metrics()).includes('lllm_serve_queue_jobs{state="waiting"} 2'), 60_000)).toBe(true);
    expect(await metrics()).toContain("lllm_serve_queue_workers 0");
    const checks = await doctor();
    expect(checks.find((check) => check.name === "queue workers")).toMatchObject({ status: "fail", detail: expect.stringContaining("no live worker") });
    expect(checks.find((check) => check.name === "served tactics")?.detail).toMatch(/^pool \(2 waiting, 0 running\)/);
    await worker();
    // Both taken, held by their tool: running on the worker, none waiting.
    expect(await waitUntil(async () => (await metrics()).includes('lllm_serve_queue_jobs{state="active"} 2'), 60_000)).toBe(true);
    expect(await metrics()).toContain('lllm_serve_queue_jobs{state="waiting"} 0');
    expect((await doctor()).find((check) => check.name === "served tactics")?.detail).toMatch(/^pool \(0 waiting, 2 running\)/);
    holds.release("released");
    expect((await Promise.all(waiting)).map((result) => result.end)).toEqual(["done", "done"]);
    expect(await waitUntil(async () => (await metrics()).includes('lllm_serve_queue_jobs{state="active"} 0'), 60_000)).toBe(true);
    expect(await waitUntil(async () => (await metrics()).includes("lllm_serve_queue_workers 1"), 60_000)).toBe(true);
    const after = await doctor();
    expect(after.find((check) => check.name === "queue workers")).toMatchObject({ status: "ok", detail: expect.stringMatching(/^1 live worker: \S+:\d+/) });
    // The withdrawn request never reached the model.
    expect(mock.requests.map((request) => userOf(request.body)).sort()).toEqual(["quiet 1", "quiet 1", "quiet 2", "quiet 2"]);
  });
});
