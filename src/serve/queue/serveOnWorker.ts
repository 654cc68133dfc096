import { setMaxListeners } from "node:events";
import { rmSync } from "node:fs";
import type { Redis } from "ioredis";
import { approveAll, approveNone } from "../../approval/index.js";
import { prepareQueuedTactic, readAnnouncement, Refusal } from "../../batch/queue/prepareQueuedTactic.js";
import { markWorkerAlive, queueTimings, SERVING_PROTOCOL } from "../../batch/queue/queueConnection.js";
import { RedisLink } from "../../batch/queue/RedisLink.js";
import { InterruptedError, LllmError } from "../../errors.js";
import type { RunWorkerOptions } from "../../batch/queue/runWorker.js";
import type { PreparedTactic } from "../../tactics/prepareTactic.js";
import { processTempDir } from "../../util/processTempDir.js";
import { environmentSecrets, redactSecrets } from "../../util/redact.js";
import { StreamRedactor } from "../../util/StreamRedactor.js";
import type { RunListener, RunOutcome } from "../RunHandle.js";
import { ServedRun } from "../ServedRun.js";
import { callKey, cancelledKey, refusalKey, SERVE_TACTICS_KEY, serverChannel, serverKey, settledKey, tacticKey, workerChannel, type PausedCall, type RunCommand, type RunEvent, type RunState, type ServedJob, type SettledEvent, type SettledRecord } from "./serveQueueWire.js";
import { JobTaker } from "./JobTaker.js";
import { repeatInTurn } from "../../util/repeatInTurn.js";
import { endedWithout, toWire } from "./wireRecordedRun.js";

/** What `lllm worker` gives the batch side (`RunWorkerOptions`), and this worker's id. */
export interface ServeOnWorkerOptions extends RunWorkerOptions {
  /** This worker's id (`host:pid`), as its heartbeat key names it (`runWorker` keeps that key alive). */
  me: string;
}

/** A run this worker holds: running, or paused waiting for its client. */
interface HeldRun {
  job: ServedJob;
  run: ServedRun;
  /** The server its events go to (the one its client's last request came to). */
  server: string;
  redactor: StreamRedactor;
  paused: boolean;
  /** Aborts it when its client does not come back within --pending-ttl. */
  ttl?: NodeJS.Timeout;
  callIds: string[];
  /** The number of its last settled event (see `RunEvent`). */
  seq: number;
  /** Stopped by the worker's own stop (its drain's end, a second signal): given back to its server, not ended. */
  stopped?: boolean;
}

/** Takes a tactic's digest out of the set of served ones, unless a server announced it again meanwhile. */
const FORGET_TACTIC_SCRIPT = "if redis.call('exists', KEYS[1]) == 0 then return redis.call('srem', KEYS[2], ARGV[1]) end return 0";

/**
 * The served requests of `lllm serve --queue` on a worker (beside the batches `runWorker` runs): joins each tactic
 * the servers announce that it has among its own packages (with the same digest, as for a batch), runs each job as a
 * served run, and publishes the run's text, replies, pauses and end to the server waiting for it. Commands from the
 * servers cancel a run or continue a paused one (from whichever server its client's next request reached). A run
 * whose server is gone (no heartbeat) while it runs is stopped: nobody would read its answer. Returns when `stop`
 * aborts and the running requests have ended, with how many requests it ran.
 */
export async function serveOnWorker(options: ServeOnWorkerOptions): Promise<{ served: number }> {
  const timings = queueTimings();
  const link = await RedisLink.open({ url: options.url, reconnectMs: timings.reconnectMs, warn: options.warn, say: options.say });
  const cancel = AbortSignal.any([options.cancel, link.failed]);
  setMaxListeners(options.concurrency * 4 + 20, cancel);
  const redis = link.client;
  let subscriber: Redis | undefined;
  const held = new Map<string, HeldRun>();
  const joined = new Map<string, { taker: JobTaker; prepared: PreparedTactic }>();
  /**
   * Tactics refused, with the announcement refused and why: looked at again when it changes (the servers of that
   * tactic were upgraded to this worker's version, or given what it lacked), never for good. Why is kept in Redis for
   * the servers too (`refusalKey`, each round: see `keepRefusals`), so that a tactic no live worker takes fails its
   * requests at once instead of leaving them waiting.
   */
  const refused = new Map<string, { text: string; message: string }>();
  const joining = new Set<string>();
  let scratch: string | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  /** Requests whose run this worker started. */
  let served = 0;
  // Once, not per run: every served run of this worker has its environment (see startRunLog).
  const credentials = environmentSecrets(process.env);

  // Events of many runs go out in the same turn of the loop: one write for all (auto-pipelining).
  const publisher = redis.duplicate({ enableAutoPipelining: true });
  publisher.on("error", () => undefined);
  /** Events on their way to servers, and the jobs being run: a stopping worker lets both finish before it hangs up. */
  const sending = new Set<Promise<unknown>>();
  const jobs = new Set<Promise<void>>();
  const tracked = <T>(set: Set<Promise<T>>, promise: Promise<T>): Promise<T> => {
    set.add(promise);
    void promise.finally(() => set.delete(promise)).catch(() => undefined);
    return promise;
  };
  /** Tell a server about one of its runs (on its way while the worker stops: see `sending`). */
  const tell = (server: string, event: RunEvent): void => {
    void tracked(sending, publisher.publish(serverChannel(server), JSON.stringify(event)).catch(() => undefined));
  };
  const publish = (entry: HeldRun, event: RunEvent): void => tell(entry.server, event);
  /**
   * Tell a server how a run stands (started, paused, ended), numbered, and keep it under the run's key for a few
   * heartbeats (see `settledKey`). Both through the connection's pipeline, as the run's text before it: a MULTI
   * would be written at once, ahead of text still in the pipeline, and the end would overtake it.
   */
  const settled = (server: string, event: SettledEvent, seq: number): void => {
    const numbered = { ...event, seq };
    const record: SettledRecord = { worker: options.me, server, event: numbered };
    // Kept as long as a server may be away from Redis and come back (`LLLM_QUEUE_RECONNECT_MS`), and a few beats more.
    void tracked(sending, publisher.set(settledKey(event.run), JSON.stringify(record), "PX", timings.reconnectMs + 4 * timings.aliveMs).catch(() => undefined));
    tell(server, numbered);
  };
  /** A run's end that ran nothing: no text, no tokens. */
  const endedEmpty = (run: string, error: Error): SettledEvent => ({ run, type: "finished", result: toWire(endedWithout(error)), state: { lastText: "", streamedSinceCall: "", usage: { promptTokens: 0, completionTokens: 0 } } });
  const state = (entry: HeldRun): RunState => ({ lastText: redactSecrets(entry.run.lastText), streamedSinceCall: redactSecrets(entry.run.streamedSinceCall), usage: { promptTokens: entry.run.usage.promptTokens, completionTokens: entry.run.usage.completionTokens } });
  const listener = (entry: HeldRun): RunListener => ({
    text: (delta) => {
      const safe = entry.redactor.push(delta);
      if (safe !== "") publish(entry, { run: entry.job.runKey, type: "text", delta: safe });
    },
    event: (event) => {
      // Replies matter to a client only while it streams (and to A2A's status messages).
      if (event.type !== "model_reply" || !(entry.job.stream || entry.job.askApproval)) return;
      // A reply's text is whole: what the redactor held back (a possible start of a secret) goes now, not at the end.
      flush(entry);
      publish(entry, { run: entry.job.runKey, type: "reply", agent: event.agent, round: event.round, text: redactSecrets(event.text), toolCalls: event.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: redactSecrets(typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments)) })) });
    },
  });
  const flush = (entry: HeldRun): void => {
    const rest = entry.redactor.flush();
    if (rest !== "") publish(entry, { run: entry.job.runKey, type: "text", delta: rest });
  };

  /** Tell the server how the run paused or ended; a paused run waits (its calls findable by any server) up to its TTL. */
  const settle = async (entry: HeldRun, outcome: RunOutcome): Promise<void> => {
    flush(entry);
    const runKey = entry.job.runKey;
    if (outcome.type === "finished") {
      held.delete(runKey);
      // A run that ends while it waits for its client's tool results (cancelled, its TTL passed, the worker stopping):
      // its calls are no longer to be found, so that results sent later get their 400 at once from any server.
      if (entry.paused && entry.callIds.length > 0) void redis.del(...entry.callIds.map(callKey)).catch(() => undefined);
      // Stopped by this worker's own stop, not its client or its server: the server may run it elsewhere.
      if (entry.stopped && !outcome.run.ok) return settled(entry.server, { run: runKey, type: "given_back", worker: options.me, state: state(entry) }, ++entry.seq);
      return settled(entry.server, { run: runKey, type: "finished", result: toWire(outcome.run), state: state(entry) }, ++entry.seq);
    }
    entry.paused = true;
    if (outcome.type === "paused") {
      entry.callIds = outcome.calls.map((call) => call.id);
      const seq = ++entry.seq;
      const paused: PausedCall = { run: runKey, worker: options.me, model: entry.job.model, ids: entry.callIds, calls: outcome.calls, seq };
      const write = redis.multi();
      for (const id of entry.callIds) write.set(callKey(id), JSON.stringify(paused), "PX", entry.job.pendingTtlMs);
      await write.exec().catch(() => undefined);
      settled(entry.server, { run: runKey, type: "paused", calls: outcome.calls, text: redactSecrets(outcome.text), state: state(entry) }, seq);
    } else {
      settled(entry.server, { run: runKey, type: "approval", call: { ...outcome.call, arguments: JSON.parse(redactSecrets(JSON.stringify(outcome.call.arguments))) as Record<string, unknown> }, state: state(entry) }, ++entry.seq);
    }
    entry.ttl = setTimeout(() => entry.run.abort(new InterruptedError("interrupted", `the client's answer did not come within ${Math.round(entry.job.pendingTtlMs / 1000)} s (--pending-ttl)`)), Math.min(entry.job.pendingTtlMs, 2 ** 31 - 1));
    entry.ttl.unref();
    // The run ends there when it is cancelled or its TTL passes: the server still waiting hears of it.
    void entry.run.done.then(() => {
      if (held.get(runKey) === entry && entry.paused) void settle(entry, { type: "finished", run: entry.run.finished! });
    });
  };

  /** Go on with a paused run (its client's next request came to `server`). */
  const proceed = (entry: HeldRun, server: string, go: (run: ServedRun) => void): void => {
    if (!entry.paused) return;
    entry.paused = false;
    clearTimeout(entry.ttl);
    if (entry.callIds.length > 0) void redis.del(...entry.callIds.map(callKey)).catch(() => undefined);
    entry.callIds = [];
    if (server !== entry.server) {
      // The server that had it forgets it; events go to the new one.
      publish(entry, { run: entry.job.runKey, type: "moved" });
      entry.server = server;
    }
    const next = entry.run.next(listener(entry));
    go(entry.run);
    void next.then((outcome) => settle(entry, outcome));
  };

  const onCommand = (text: string): void => {
    let command: RunCommand;
    try {
      command = JSON.parse(text) as RunCommand;
    } catch {
      return;
    }
    const entry = held.get(command.run);
    if (command.type !== "cancel" && !entry?.paused) {
      // Results for a run that ended (its server stopped, its TTL passed) or that another request went on with: the
      // server that sent them hears so at once, and answers its client with a 400, instead of waiting for nothing.
      const gone = new LllmError("serve_run_gone", `no run waits for ${command.type === "resume" ? "the results of these tool calls" : "this approval"}: it ended (its server stopped, or its --pending-ttl passed) or another request went on with it; send the conversation again ending with a user message`);
      return tell(command.server, endedEmpty(command.run, gone));
    }
    if (!entry) return;
    if (command.type === "cancel") entry.run.abort(new InterruptedError("interrupted", command.message));
    else if (command.type === "resume") proceed(entry, command.server, (run) => run.resume(new Map(command.results)));
    else proceed(entry, command.server, (run) => run.answerApproval(command.allowed));
  };

  /** One job: start its run; the job is done when the run first pauses or ends (a paused run waits outside any job). */
  const runJob = async (text: string, prepared: PreparedTactic): Promise<void> => {
    const data = JSON.parse(text) as ServedJob;
    // Asked and said in one write (the auto-pipelined connection), with those of every job this turn takes: whether
    // the run was cancelled before it was taken, and that it started (its server then knows whom to cancel).
    const cancelled = publisher.exists(cancelledKey(data.runKey));
    settled(data.server, { run: data.runKey, type: "started", worker: options.me }, 1);
    if ((await cancelled) === 1) {
      // Cancelled as it was taken: its server, which could no longer take it off the list, hears that it ended.
      return settled(data.server, endedEmpty(data.runKey, new InterruptedError("interrupted", "the request was cancelled before it started")), 2);
    }
    served += 1;
    const run = new ServedRun({
      model: { id: data.model, prepared, created: Math.floor(Date.now() / 1000), description: prepared.tactic.config.description },
      input: data.input,
      ...(data.inputMedia ? { inputMedia: data.inputMedia } : {}),
      ...(data.history ? { history: data.history } : {}),
      ...(data.clientTools ? { clientTools: data.clientTools } : {}),
      ...(data.toolChoice ? { toolChoice: data.toolChoice } : {}),
      ...(data.parallelToolCalls !== undefined ? { parallelToolCalls: data.parallelToolCalls } : {}),
      ...(data.responseFormat ? { responseFormat: data.responseFormat } : {}),
      ...(data.modelArgs ? { modelArgs: data.modelArgs } : {}),
      ...(data.limits ? { limits: data.limits } : {}),
      ...(data.limitSources ? { limitSources: data.limitSources } : {}),
      served: data.served,
      approve: data.approveAll ? approveAll : approveNone,
      ...(data.askApproval ? { askApproval: true } : {}),
      stream: data.stream,
      log: options.log !== false && data.log,
      environmentSecrets: credentials,
      warn: options.warn,
    });
    const entry: HeldRun = { job: data, run, server: data.server, redactor: new StreamRedactor(), paused: false, callIds: [], seq: 1 };
    held.set(data.runKey, entry);
    const stopRun = (): void => {
      entry.stopped = true;
      run.abort(new InterruptedError("interrupted", "the worker was stopped"));
    };
    cancel.addEventListener("abort", stopRun, { once: true });
    void run.done.then(() => cancel.removeEventListener("abort", stopRun));
    // Stopped while its job was being taken (a drain timeout of 0): a listener added now would never hear of it.
    if (cancel.aborted) stopRun();
    const next = run.next(listener(entry));
    run.start();
    await settle(entry, await next);
  };

  const join = async (digest: string, text: string): Promise<void> => {
    let prepared: PreparedTactic;
    // Named as its servers serve it (their model's name), not by its digest, once the announcement is read.
    let name = digest;
    try {
      const announcement = readAnnouncement(text, "served");
      name = `\`${announcement.tactic}\``;
      // A server of another lllm version puts its requests where this worker does not look, or in another shape.
      if (announcement.serving !== SERVING_PROTOCOL) throw new Refusal(`its server runs another lllm version (serving protocol ${announcement.serving ?? "1, from before protocol 2"}; this worker's: ${SERVING_PROTOCOL}): give the servers and workers of a queue the same lllm version`);
      prepared = await prepareQueuedTactic(announcement, { registry: options.registry, packages: options.packages, scratch: () => (scratch ??= processTempDir("lllm-worker-")) });
    } catch (error) {
      const message = error instanceof Refusal ? error.message : `this worker could not prepare the tactic: ${(error as Error).message}`;
      refused.set(digest, { text, message });
      options.warn(`served tactic ${name} refused: ${message}`);
      return;
    }
    // A tactic whose preparation ended after the worker began to drain is not joined: it would take jobs.
    if (draining()) return;
    // Taken now: a refusal of an earlier announcement of it (this worker's, kept for the servers) no longer holds.
    await redis.del(refusalKey(digest, options.me));
    const blocking = redis.duplicate();
    blocking.on("error", () => undefined); // the link says what is wrong with Redis
    const taker = new JobTaker({ blocking, commands: publisher, digest, me: options.me, concurrency: options.concurrency, aliveMs: timings.aliveMs, run: (text) => tracked(jobs, runJob(text, prepared)), warn: options.warn });
    joined.set(digest, { taker, prepared });
    options.say(`lllm worker: serving ${prepared.tactic.config.name ?? digest} (requests of lllm serve --queue)`);
  };

  const draining = (): boolean => options.stop.aborted || link.failed.aborted;
  /**
   * When Redis was last seen to have lost its data (a list of running jobs gone): servers' keys are back within ten
   * of their heartbeats.
   */
  let lostAt: number | undefined;
  /**
   * Keep this worker's lists of running jobs alive; a list Redis lost (it restarted without its data) is put back,
   * and for a while no server is taken for gone.
   */
  const keepLists = async (): Promise<void> => {
    const takers = [...joined.values()].map((entry) => entry.taker);
    const kept = await Promise.all(takers.map((taker) => taker.kept()));
    const lost = takers.filter((_, index) => !kept[index]);
    if (lost.length === 0) return;
    lostAt = Date.now();
    await Promise.all(lost.map((taker) => taker.restore()));
  };

  /**
   * Say (again) in Redis why this worker refuses each tactic it refuses: each refusal lives as long as this worker's
   * own key (it beats as often), so that one of a worker gone expires with it, and comes back after a Redis restart.
   */
  const keepRefusals = async (): Promise<void> => {
    if (refused.size === 0) return;
    const write = redis.multi();
    for (const [digest, { message }] of refused) write.set(refusalKey(digest, options.me), message, "PX", timings.aliveMs);
    await write.exec();
  };

  /**
   * A heartbeat's work: keep this worker's running lists alive, join the tactics servers announce and let go of those
   * they no longer do, say why it refuses the others, and stop the runs whose server is gone. A worker that drains
   * (`stop`: it takes nothing new) does all but the joining until its runs are over: a list that expired then would
   * lose its jobs if the worker is killed at the end of its grace period, a run nobody waits for would hold the drain
   * up, and a refusal that expired would leave a tactic's requests waiting for this worker.
   */
  const round = async (): Promise<void> => {
    await keepLists();
    if (!draining()) await joinAnnounced();
    await keepRefusals();
    // A running run whose server is gone: nobody reads its answer. Not while Redis starts again from nothing (a
    // server's key is back at its next heartbeat), which it may have done while these were read.
    const running = [...held.values()].filter((entry) => !entry.paused);
    if (running.length === 0) return;
    const alive = await Promise.all(running.map((entry) => redis.exists(serverKey(entry.server))));
    await keepLists();
    if (lostAt !== undefined && Date.now() - lostAt < timings.aliveMs) return;
    running.forEach((entry, index) => {
      if (alive[index] === 0) entry.run.abort(new InterruptedError("interrupted", "the server waiting for this request is gone"));
    });
  };

  const joinAnnounced = async (): Promise<void> => {
    const digests = await redis.smembers(SERVE_TACTICS_KEY);
    for (const digest of digests) {
      if (joining.has(digest)) continue;
      const text = await redis.get(tacticKey(digest));
      if (text === null) {
        // No server announces it any more (the announcement outlives a server's last heartbeat by `aliveMs`): let go
        // of it, its blocking connection with it, and of its name in the set; a server announcing it again is joined again.
        const entry = joined.get(digest);
        if (entry) {
          joined.delete(digest);
          void entry.taker.close().catch(() => undefined);
          options.say(`lllm worker: no longer serving ${entry.prepared.tactic.config.name ?? digest} (no server announces it)`);
        }
        if (refused.delete(digest)) await redis.del(refusalKey(digest, options.me));
        await redis.eval(FORGET_TACTIC_SCRIPT, 2, tacticKey(digest), SERVE_TACTICS_KEY, digest);
        continue;
      }
      if (joined.has(digest) || refused.get(digest)?.text === text) continue;
      // Looked at again (its refusal, kept meanwhile, is written anew or removed by `join`).
      refused.delete(digest);
      // Rounds run on a timer: one still preparing this tactic must not be joined twice by the next.
      joining.add(digest);
      await join(digest, text).finally(() => joining.delete(digest));
    }
  };

  try {
    try {
      await link.ready(options.stop);
    } catch (error) {
      if (options.stop.aborted && !link.failed.aborted) return { served };
      throw error;
    }
    // Live before it takes a job (the batch side's heartbeat, on a connection of its own, may not have said so yet):
    // a server takes back the jobs on the list of a worker that is not (QueueBridge's `reclaim`).
    await link.guard(markWorkerAlive(redis, options.me, timings.aliveMs));
    // Made once already (`ready` above): each later "ready" is a new connection, to a Redis that may have lost its
    // data: the lists of running jobs are looked at (and put back) at once, not at the next heartbeat.
    redis.on("ready", () => void link.guard(keepLists()).catch(() => undefined));
    subscriber = redis.duplicate();
    subscriber.on("error", () => undefined);
    subscriber.on("message", (_channel: string, text: string) => onCommand(text));
    await subscriber.subscribe(workerChannel(options.me));
    heartbeat = repeatInTurn(() => link.guard(round()), timings.heartbeatMs, { now: true });
    await new Promise<void>((resolve) => {
      if (options.stop.aborted || link.failed.aborted) return resolve();
      options.stop.addEventListener("abort", () => resolve(), { once: true });
      link.failed.addEventListener("abort", () => resolve(), { once: true });
    });
    // No new requests; the running ones finish (a second Ctrl-C cancels them); paused ones cannot go on past here.
    for (const entry of held.values()) if (entry.paused) entry.run.abort(new InterruptedError("interrupted", "the worker was stopped"));
    await Promise.race([Promise.allSettled([...joined.values()].map((entry) => entry.taker.close())), link.whenDown()]);
    await Promise.race([Promise.allSettled([...held.values()].map((entry) => entry.run.done)), link.whenDown()]);
    // Their last events (a run's end goes out just after it) reach the servers before the connection closes.
    await Promise.race([Promise.allSettled([...jobs]).then(() => Promise.allSettled([...sending])), link.whenDown()]);
    // Its refusals go with it, not a few heartbeats later (servers count only live workers' refusals anyway).
    const refusals = [...refused.keys()].map((digest) => refusalKey(digest, options.me));
    refused.clear(); // no round writes them again
    if (refusals.length > 0) await Promise.race([redis.del(...refusals).catch(() => undefined), link.whenDown()]);
  } finally {
    clearInterval(heartbeat);
    for (const entry of held.values()) clearTimeout(entry.ttl);
    for (const entry of joined.values()) entry.taker.disconnect();
    subscriber?.disconnect();
    publisher.disconnect();
    link.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
  return { served };
}
