import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Redis } from "ioredis";
import { queuedTactic } from "../../batch/queue/queuedTactic.js";
import { queueDigest } from "../../batch/queue/queueDigest.js";
import { queueTimings, SERVING_PROTOCOL, type BatchAnnouncement, type QueueTimings, type WorkerMark } from "../../batch/queue/queueConnection.js";
import { RedisLink } from "../../batch/queue/RedisLink.js";
import type { ServedModel } from "../ServedModels.js";
import type { ServedRunOptions } from "../ServedRun.js";
import { approveAll } from "../../approval/index.js";
import { newWireId } from "../newWireId.js";
import { isPlainObject } from "../../util/isPlainObject.js";
import { repeatInTurn } from "../../util/repeatInTurn.js";
import { RemoteRun, type RunTransport } from "./RemoteRun.js";
import { liveWorkerMarks, oneLine, refusedByAll, servedRefusalError } from "./servedRefusals.js";
import { callKey, cancelledKey, runningPrefix, scanKeys, SERVE_TACTICS_KEY, servedJobCounts, serverChannel, serverKey, settledKey, tacticKey, waitingKey, workerChannel, type PausedCall, type RunCommand, type RunEvent, type ServedJob, type SettledRecord } from "./serveQueueWire.js";

/** What `/metrics` shows of the pool. */
export interface QueueGauges {
  /** Jobs waiting for a worker, over the served tactics' queues. */
  waiting: number;
  /** Jobs a worker is running. */
  active: number;
  /** Workers whose heartbeat is live. */
  workers: number;
}

/** How long requests for a tactic every live worker refuses share one look at the workers. */
export const LOOK_AGAIN_MS = 1000;

/**
 * The server's side of `lllm serve --queue`: announces the served tactics to the workers (each by the digest of its
 * resolved configuration, as a batch announces its own: a worker runs only a tactic it has, the same), puts each
 * run's job on its tactic's list (`waitingKey`), routes the events workers publish to the runs waiting here, and
 * every heartbeat says this server is alive (a worker stops the runs of a server that is gone) and looks at the
 * workers running its runs (a run whose worker is gone is replaced or ended). A tactic every live worker refuses (it
 * lacks a package, has another copy: see `refusalKey`) is said on stderr, and its requests fail with the workers'
 * reasons rather than wait for a worker that will never take them.
 */
export class QueueBridge implements RunTransport {
  readonly serverId = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  readonly #link: RedisLink;
  readonly #subscriber: Redis;
  readonly #timings: QueueTimings;
  /** Each served model's digest and announcement. */
  readonly #tactics = new Map<ServedModel, { digest: string; announcement: BatchAnnouncement }>();
  /** The digests of the served tactics, each once (two models may serve one tactic). */
  #digests: string[] = [];
  readonly #runs = new Map<string, RemoteRun>();
  /** Jobs to add to each tactic's list at the end of this turn of the event loop (see `enqueue`), by digest. */
  readonly #unsent = new Map<string, Array<{ run: RemoteRun; text: string }>>();
  /** The text of each job no worker said it took yet, by run key: what `withdraw` takes off its list. */
  readonly #queued = new Map<string, { digest: string; text: string }>();
  readonly #warn: (message: string) => void;
  /** The served tactics every live worker refused at the last look, by digest: each worker's reason. */
  readonly #refusedBy = new Map<string, ReadonlyMap<string, string>>();
  /** The look at a refused tactic's workers that requests share (`enqueue`), by digest, for a second after it ends. */
  readonly #looking = new Map<string, Promise<ReadonlyMap<string, string> | undefined>>();
  /** The refusals said on stderr (`digest worker` → message): each once, while every live worker refuses. */
  #told = new Map<string, string>();
  #heartbeat: NodeJS.Timeout | undefined;
  #noWorkerSince = Date.now();
  #warnedNoWorker = false;
  #closed = false;
  /** This server's key was written (a key of its own it then finds gone means Redis lost its data). */
  #marked = false;
  /** When this server saw that Redis lost its data (see `#beat`); its jobs are then looked for once (`#requeueDue`). */
  #lostAt: number | undefined;
  #requeueDue = false;

  private constructor(link: RedisLink, subscriber: Redis, timings: QueueTimings, warn: (message: string) => void) {
    this.#link = link;
    this.#subscriber = subscriber;
    this.#timings = timings;
    this.#warn = warn;
  }

  /**
   * Connect (failing after `LLLM_QUEUE_RECONNECT_MS` when Redis cannot be reached), announce `models`, and listen for
   * their runs' events. A tactic the workers could not be given (a file outside any package that sets what a worker
   * takes only from its own packages) is a `ConfigError`, before anything is announced.
   */
  static async open(options: { url: string; models: ServedModel[]; warn: (message: string) => void; say: (message: string) => void }): Promise<QueueBridge> {
    const timings = queueTimings();
    const tactics = options.models.map((model) => {
      const { prepared } = model;
      const digest = queueDigest(prepared);
      const announcement: BatchAnnouncement = {
        batchId: `serve-${digest}`,
        tactic: model.id,
        queued: queuedTactic(prepared, prepared.model ?? null),
        packages: prepared.registry.list().map((pkg) => ({ name: pkg.name, version: pkg.manifest.version ?? null })),
        model: prepared.model ?? null,
        digest,
        vars: {},
        maxSteps: null,
        timeout: null,
        approve: "none",
        producer: { host: hostname(), pid: process.pid },
        out: null,
        serving: SERVING_PROTOCOL,
      };
      return [model, { digest, announcement }] as const;
    });
    const link = await RedisLink.open({ url: options.url, reconnectMs: timings.reconnectMs, warn: options.warn, say: options.say });
    try {
      await link.ready();
    } catch (error) {
      link.close();
      throw error;
    }
    const subscriber = link.client.duplicate();
    subscriber.on("error", () => undefined); // the link says what is wrong with Redis
    const bridge = new QueueBridge(link, subscriber, timings, options.warn);
    for (const [model, tactic] of tactics) bridge.#tactics.set(model, tactic);
    bridge.#digests = [...new Set(tactics.map(([, tactic]) => tactic.digest))];
    subscriber.on("message", (_channel: string, text: string) => bridge.#onMessage(text));
    await subscriber.subscribe(serverChannel(bridge.serverId));
    await bridge.#beat();
    // One beat at a time: two at once would queue a job Redis lost twice (`#requeueLost`).
    bridge.#heartbeat = repeatInTurn(() => bridge.#beat(), timings.heartbeatMs);
    // Redis gone for good: no event will come for the runs in flight; they end now, with the reason.
    link.failed.addEventListener(
      "abort",
      () => {
        clearInterval(bridge.#heartbeat);
        const reason = link.failed.reason instanceof Error ? link.failed.reason : new Error(String(link.failed.reason));
        for (const run of [...bridge.#runs.values()]) run.queueLost(reason);
      },
      { once: true },
    );
    return bridge;
  }

  /** Aborted when the link to Redis gives up (see `RedisLink.failed`): the queue is gone for this server. */
  get failed(): AbortSignal {
    return this.#link.failed;
  }

  /** A run of `options.model` on the queue (started by `start()`). */
  createRun(options: ServedRunOptions, pendingTtlMs: number, log: boolean): RemoteRun {
    const job: Omit<ServedJob, "runKey" | "server"> = {
      model: options.model.id,
      input: options.input,
      ...(options.inputMedia ? { inputMedia: options.inputMedia } : {}),
      ...(options.history && options.history.length > 0 ? { history: options.history } : {}),
      ...(options.clientTools ? { clientTools: options.clientTools } : {}),
      ...(options.toolChoice ? { toolChoice: options.toolChoice } : {}),
      ...(options.parallelToolCalls !== undefined ? { parallelToolCalls: options.parallelToolCalls } : {}),
      ...(options.responseFormat ? { responseFormat: options.responseFormat } : {}),
      ...(options.modelArgs ? { modelArgs: options.modelArgs } : {}),
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.limitSources ? { limitSources: options.limitSources } : {}),
      served: options.served,
      approveAll: options.approve === approveAll,
      askApproval: options.askApproval === true,
      stream: options.stream,
      log,
      pendingTtlMs,
    };
    return new RemoteRun({ model: options.model, job, transport: this });
  }

  /** The paused run (started through any server) that waits for the results of these calls, taken over by this one. */
  async adopt(callIds: string[], modelOf: (id: string) => ServedModel | undefined): Promise<RemoteRun | undefined> {
    for (const id of callIds) {
      const text = await this.#link.guard(this.#link.client.get(callKey(id)));
      if (text === null) continue;
      const paused = JSON.parse(text) as PausedCall;
      const model = modelOf(paused.model);
      if (!model) return undefined;
      return RemoteRun.adopted({ model, paused, transport: this });
    }
    return undefined;
  }

  async gauges(): Promise<QueueGauges> {
    let waiting = 0;
    let active = 0;
    for (const digest of this.#digests) {
      const counts = await this.#link.guard(servedJobCounts(this.#link.client, digest));
      waiting += counts.waiting;
      active += counts.running;
    }
    return { waiting, active, workers: (await this.#liveWorkers()).size };
  }

  newRunKey(): string {
    return newWireId(`r${Date.now().toString(36)}`);
  }

  /**
   * Put the run's job on its tactic's list. The jobs of the requests that arrive in the same turn of the event loop
   * go in one command: one job at a time cost a write to Redis each, and under load those writes took more of the
   * server's time than the rest of queueing.
   */
  enqueue(run: RemoteRun, job: ServedJob): void {
    const digest = this.#tactics.get(run.model)!.digest;
    if (!this.#refusedBy.has(digest)) return this.#queue(run, job, digest);
    // Every live worker refused its tactic at the last look: looked at again now (one may take it since), and the
    // request fails at once rather than wait for nobody; queued as any when Redis cannot say. One look a second at
    // most: clients that retry a 503 at once must not turn into a scan of Redis each.
    this.#looking.set(digest, this.#looking.get(digest) ?? this.#refusalsOf(digest).finally(() => setTimeout(() => this.#looking.delete(digest), LOOK_AGAIN_MS).unref()));
    void this.#link
      .guard(this.#looking.get(digest)!)
      .catch(() => undefined)
      .then((reasons) => (reasons ? run.refused(servedRefusalError(this.#link.shownUrl, run.model.id, reasons)) : this.#queue(run, job, digest)));
  }

  #queue(run: RemoteRun, job: ServedJob, digest: string): void {
    const text = JSON.stringify(job);
    this.#runs.set(job.runKey, run);
    this.#queued.set(job.runKey, { digest, text });
    // Nothing unsent yet: this is the turn's first job, and the send is scheduled with it.
    if (this.#unsent.size === 0) setImmediate(() => this.#send());
    const waiting = this.#unsent.get(digest);
    if (waiting) waiting.push({ run, text });
    else this.#unsent.set(digest, [{ run, text }]);
  }

  #send(): void {
    const unsent = [...this.#unsent];
    this.#unsent.clear();
    for (const [digest, entries] of unsent) {
      // At the list's head, in order: workers take from its tail, so the first to come is the first run.
      const added = this.#link.client.lpush(waitingKey(digest), ...entries.map((entry) => entry.text));
      added.catch((error: unknown) => {
        // Redis away: the link says so, and gives up in time; the runs end as lost.
        this.#warn(`${entries.length === 1 ? "a request" : `${entries.length} requests`} could not be queued: ${(error as Error).message}`);
        for (const { run } of entries) run.workerLost();
      });
    }
  }

  async withdraw(runKey: string): Promise<boolean> {
    const client = this.#link.client;
    await client.set(cancelledKey(runKey), "1", "PX", 10 * 60_000).catch(() => undefined);
    const queued = this.#queued.get(runKey);
    if (!queued) return false;
    const removed = (await client.lrem(waitingKey(queued.digest), 1, queued.text).catch(() => 0)) === 1;
    if (removed) this.release(runKey);
    return removed;
  }

  command(worker: string, command: RunCommand): void {
    void this.#link.client.publish(workerChannel(worker), JSON.stringify(command)).catch(() => undefined);
  }

  track(run: RemoteRun): void {
    this.#runs.set(run.runKey, run);
  }

  release(runKey: string): void {
    this.#runs.delete(runKey);
    this.#queued.delete(runKey);
  }

  /** Stop: no heartbeat (the workers stop what is left of this server's runs), no more events. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    await Promise.race([this.#link.guard(this.#link.client.del(serverKey(this.serverId))).catch(() => undefined), this.#link.whenDown()]);
    this.#subscriber.disconnect();
    this.#link.close();
  }

  #onMessage(text: string): void {
    let event: RunEvent;
    try {
      event = JSON.parse(text) as RunEvent;
    } catch {
      return;
    }
    // A worker runs it (its "started" may have been lost): it can no longer be taken off the list.
    this.#queued.delete(event.run);
    this.#runs.get(event.run)?.onEvent(event);
    // Its end came: the copy its worker kept for a server that misses it (`settledKey`) need not wait for its time.
    if ((event.type === "finished" || event.type === "given_back") && event.seq !== undefined) void this.#link.client.unlink(settledKey(event.run)).catch(() => undefined);
  }

  /** Say this server is alive, announce its tactics, and look at the workers of its runs. */
  async #beat(): Promise<void> {
    if (!this.#link.isUp) return;
    const client = this.#link.client;
    const ttl = this.#timings.aliveMs;
    // Its own key, and what it held: gone before its time to live means Redis lost its data (it restarted without
    // persistence, or this server was away longer than that), whether or not the connection dropped.
    const batch = client.multi().set(serverKey(this.serverId), String(Date.now()), "PX", ttl, "GET");
    for (const { digest, announcement } of this.#tactics.values()) batch.set(tacticKey(digest), JSON.stringify(announcement), "PX", ttl).sadd(SERVE_TACTICS_KEY, digest);
    // The set of served tactics outlives the last server by a while, not for good (its workers may have stopped first).
    if (this.#tactics.size > 0) batch.pexpire(SERVE_TACTICS_KEY, 2 * ttl);
    const [mark] = (await batch.exec()) ?? [];
    if (this.#marked && mark?.[0] == null && mark?.[1] == null) this.#lost();
    this.#marked = true;
    const live = await this.#liveWorkers();
    // Lost while the workers were read (they were read from a Redis that holds nothing yet)?
    if ((await client.exists(serverKey(this.serverId))) === 0) this.#lost();
    // Until the workers had ten heartbeats to mark themselves and put back their lists of running jobs, no worker is
    // taken for gone; then the jobs no worker took, and Redis lost, are queued again.
    if (this.#lostAt !== undefined) {
      if (Date.now() - this.#lostAt < ttl) return;
      this.#lostAt = undefined;
    }
    if (this.#requeueDue) {
      this.#requeueDue = false;
      await this.#requeueLost().catch((error: unknown) => {
        this.#requeueDue = true;
        throw error;
      });
    }
    // Workers of another lllm version never take this server's jobs (nor this server theirs): said, not waited on.
    const others = [...live.values()].filter((mark) => mark?.serving !== SERVING_PROTOCOL).length;
    if (live.size === others) {
      if (!this.#warnedNoWorker && Date.now() - this.#noWorkerSince >= this.#timings.noWorkerMs) {
        this.#warnedNoWorker = true;
        this.#warn(
          others === 0
            ? `no \`lllm worker\` is connected to ${this.#link.shownUrl}: requests wait in the queue; start one with \`lllm worker --queue ${this.#link.shownUrl} -p DIR\` (DIR: the packages of the served tactics)`
            : `the ${others === 1 ? "one `lllm worker`" : `${others} \`lllm worker\`s`} connected to ${this.#link.shownUrl} ${others === 1 ? "runs" : "run"} another lllm version (serving protocol ${describeProtocols(live)}; this server's: ${SERVING_PROTOCOL}) and never ${others === 1 ? "takes" : "take"} its requests, which wait in the queue: give the servers and workers of a queue the same lllm version`,
        );
      }
    } else {
      this.#noWorkerSince = Date.now();
      this.#warnedNoWorker = false;
    }
    await this.#judgeRefusals(live);
    try {
      await this.#recover();
    } catch {
      // Redis away for this read: the next beat looks again.
    }
    // A run whose worker kept an end or pause this server has not had yet is not lost: it takes that in time.
    for (const run of [...this.#runs.values()]) if (run.worker !== undefined && !live.has(run.worker) && !run.missing) run.workerLost();
    await this.#reclaim(live);
  }

  /**
   * Which served tactics every live worker refuses (`refusedByAll`): each refusal is said once, and the requests of
   * such a tactic still waiting for a worker end with the workers' reasons, as new ones do (`enqueue`). Taken off
   * their list first: one a worker took meanwhile runs.
   */
  async #judgeRefusals(live: ReadonlyMap<string, WorkerMark | undefined>): Promise<void> {
    const client = this.#link.client;
    const told = new Map<string, string>();
    for (const digest of this.#digests) {
      const reasons = await refusedByAll(client, digest, live);
      if (!reasons) {
        this.#refusedBy.delete(digest);
        continue;
      }
      this.#refusedBy.set(digest, reasons);
      const name = [...this.#tactics].find(([, tactic]) => tactic.digest === digest)![0].id;
      for (const [worker, message] of reasons) {
        const key = `${digest} ${worker}`;
        told.set(key, message);
        if (this.#told.get(key) !== message) this.#warn(`worker ${worker} refuses the served tactic \`${name}\`, and no live worker takes it (its requests fail: 503, queue_refused): ${oneLine(message)}`);
      }
      for (const [runKey, queued] of [...this.#queued]) {
        const run = this.#runs.get(runKey);
        if (queued.digest !== digest || !run) continue;
        if ((await client.lrem(waitingKey(digest), 1, queued.text)) === 1) run.refused(servedRefusalError(this.#link.shownUrl, run.model.id, reasons));
      }
    }
    this.#told = told;
  }

  /** Why every live worker refuses the tactic of `digest` now, or undefined (see `refusedByAll`), kept for `enqueue`. */
  async #refusalsOf(digest: string): Promise<ReadonlyMap<string, string> | undefined> {
    const reasons = await refusedByAll(this.#link.client, digest, await this.#liveWorkers());
    if (reasons) this.#refusedBy.set(digest, reasons);
    else this.#refusedBy.delete(digest);
    return reasons;
  }

  /**
   * How the runs in flight stand as their workers kept it (`settledKey`): a start, pause or end whose message this
   * server missed (pub/sub delivers at most once) is taken now, not waited for in vain. One read for all of them.
   */
  async #recover(): Promise<void> {
    // Not those waiting for their client: their worker's next word comes after the client's.
    const runs = [...this.#runs.values()].filter((run) => run.runKey !== "" && run.waitingFor.length === 0 && run.waitingApproval === undefined);
    if (runs.length === 0) return;
    const texts = await this.#link.client.mget(runs.map((run) => settledKey(run.runKey)));
    runs.forEach((run, index) => {
      const record = texts[index] == null ? undefined : readObject<SettledRecord>(texts[index]!);
      if (!record || !isPlainObject(record.event) || typeof record.worker !== "string" || typeof record.server !== "string") return;
      // Taken by a worker: it can no longer be taken off the list.
      this.#queued.delete(run.runKey);
      run.recover(record);
    });
  }

  /**
   * The jobs of this server's that a worker took and died before it said so (it says so at once, so this is rare): its
   * list outlives it for a while, and they go back to the queue from there, as a run whose worker is lost.
   */
  async #reclaim(live: ReadonlyMap<string, unknown>): Promise<void> {
    if (this.#queued.size === 0) return;
    const client = this.#link.client;
    for (const digest of this.#digests) {
      const prefix = runningPrefix(digest);
      for (const key of await scanKeys(client, `${prefix}*`)) {
        if (live.has(key.slice(prefix.length))) continue;
        for (const text of await client.lrange(key, 0, -1)) {
          const job = readObject<ServedJob>(text);
          if (job?.server !== this.serverId || !this.#queued.has(job.runKey)) continue;
          const { runKey } = job;
          // Taken off its list first: a worker stopping now cannot put it back too.
          if ((await client.lrem(key, 1, text)) === 1) this.#runs.get(runKey)?.workerLost();
        }
      }
    }
  }

  /** Redis lost its data: wait for the workers before judging them, then look for the jobs it lost. */
  #lost(): void {
    this.#lostAt = Date.now();
    this.#requeueDue = true;
  }

  /**
   * After Redis lost its data, once the workers had ten heartbeats to put back their running lists
   * (`JobTaker.restore`): the jobs of this server's that no worker said it took and that Redis no longer holds are
   * queued again, at the end workers take from (they waited longest). A job is lost when it is on no list (waiting,
   * or a worker's running list: taking it moves it there in one step, giving it back moves it back in one) and no
   * worker kept how its run stands (`settledKey`); one still to be sent this turn (`#unsent`) is not.
   */
  async #requeueLost(): Promise<void> {
    if (this.#queued.size === 0) return;
    const client = this.#link.client;
    const unsent = new Set([...this.#unsent.values()].flatMap((entries) => entries.map((entry) => entry.text)));
    const listed = new Map<string, Set<string>>();
    for (const [runKey, queued] of [...this.#queued]) {
      let found = listed.get(queued.digest);
      if (!found) {
        found = new Set(await client.lrange(waitingKey(queued.digest), 0, -1));
        for (const key of await scanKeys(client, `${runningPrefix(queued.digest)}*`)) for (const text of await client.lrange(key, 0, -1)) found.add(text);
        listed.set(queued.digest, found);
      }
      if (unsent.has(queued.text) || found.has(queued.text) || (await client.exists(settledKey(runKey))) === 1 || !this.#queued.has(runKey)) continue;
      // Given back by a worker that stopped between the two reads (off its list after the waiting list was read)?
      if ((await client.lpos(waitingKey(queued.digest), queued.text)) !== null) continue;
      await client.rpush(waitingKey(queued.digest), queued.text);
    }
  }

  /** The live workers (`host:pid`), with what each says of itself (undefined: not a mark this lllm reads). */
  #liveWorkers(): Promise<Map<string, WorkerMark | undefined>> {
    return liveWorkerMarks(this.#link.client);
  }
}

/** The serving protocols the workers say they speak, for a message: `1 (an lllm from before 2)` when none says. */
function describeProtocols(live: ReadonlyMap<string, WorkerMark | undefined>): string {
  const spoken = new Set([...live.values()].map((mark) => (typeof mark?.serving === "number" ? String(mark.serving) : "1 (an lllm from before protocol 2)")));
  return [...spoken].join(", ");
}

/**
 * What lllm wrote to Redis as a JSON object (a job on a list, a worker's mark); undefined for a text that is not one
 * (nothing of lllm's wrote it).
 */
function readObject<T>(text: string): T | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return isPlainObject(value) ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}
