import { InterruptedError } from "../../errors.js";
import type { RecordedRun } from "../../run/runRecorded.js";
import type { ApprovalCall, ClientCall, RunHandle, RunListener, RunOutcome } from "../RunHandle.js";
import type { ServedModel } from "../ServedModels.js";
import { WorkerLostError } from "./WorkerLostError.js";
import type { PausedCall, RunCommand, RunEvent, RunState, ServedJob, SettledRecord } from "./serveQueueWire.js";
import { endedWithout, fromWire } from "./wireRecordedRun.js";

/** How a remote run reaches the queue: the server's side of it (`QueueBridge`). */
export interface RunTransport {
  readonly serverId: string;
  /** A new key for an attempt of a run (its job id and the key its events carry). */
  newRunKey(): string;
  /** Put the run's job on its tactic's queue, and route its events to it. */
  enqueue(run: RemoteRun, job: ServedJob): void;
  /** Take a job nobody took yet off the queue (and mark it cancelled for a worker taking it now); true when it was removed. */
  withdraw(runKey: string): Promise<boolean>;
  /** Send a command to the worker running the run. */
  command(worker: string, command: RunCommand): void;
  /** Route the events of a run this server took over to it. */
  track(run: RemoteRun): void;
  /** Stop routing its events (it ended, or moved to another server). */
  release(runKey: string): void;
}

/** Attempts of a request whose worker died before anything was sent to its client. */
const MAX_ATTEMPTS = 3;

/**
 * How long a settled event kept by its worker must have been missing before the server takes it (see `recover`): a
 * subscriber that lags behind by more than this is not expected; one whose message was lost gets it this much late.
 */
const RECOVER_AFTER_MS = 5_000;

/**
 * A served run that runs on a worker of the queue (`lllm serve --queue`), as the routes see any run: its job is put
 * on the queue, its text and events come back through Redis as the worker sends them, its pauses (a client's tool
 * calls, an approval) and its end are mirrored here. A worker that dies before anything was sent to the client is
 * replaced (the job goes to another worker); after, the run ends with a `WorkerLostError` the client reads.
 */
export class RemoteRun implements RunHandle {
  readonly model: ServedModel;
  readonly #transport: RunTransport;
  readonly #job: Omit<ServedJob, "runKey" | "server">;
  #runKey = "";
  #worker: string | undefined;
  #attempts = 0;
  /** Something reached the client (text, a status, a pause): a lost worker can no longer be replaced unseen. */
  #sent = false;
  #listener: RunListener | undefined;
  #outcome!: { promise: Promise<RunOutcome>; resolve: (outcome: RunOutcome) => void };
  #state: RunState = { lastText: "", streamedSinceCall: "", usage: { promptTokens: 0, completionTokens: 0 } };
  #waitingFor: ClientCall[] = [];
  #waitingApproval: ApprovalCall | undefined;
  #finished: RecordedRun | undefined;
  #abortReason: unknown;
  #moved = false;
  /** The number of the last settled event taken (see `RunEvent`): one that comes both ways is taken once. */
  #settledSeq = 0;
  /** A settled event seen kept (`recover`) and not yet come as a message, and since when it is missing. */
  #missing: { seq: number; since: number } | undefined;
  #settle!: (run: RecordedRun) => void;
  readonly done: Promise<RecordedRun> = new Promise((resolve) => (this.#settle = resolve));

  constructor(options: { model: ServedModel; job: Omit<ServedJob, "runKey" | "server">; transport: RunTransport }) {
    this.model = options.model;
    this.#job = options.job;
    this.#transport = options.transport;
    this.#renewOutcome();
  }

  /** A paused run another server started, taken over because its client's next request came here. */
  static adopted(options: { model: ServedModel; paused: PausedCall; transport: RunTransport }): RemoteRun {
    const run = new RemoteRun({ model: options.model, job: { model: options.model.id, input: "", served: { route: "", model: options.model.id, client: {}, response_id: "" }, approveAll: false, askApproval: false, stream: true, log: true, pendingTtlMs: 0 }, transport: options.transport });
    run.#runKey = options.paused.run;
    run.#worker = options.paused.worker;
    run.#waitingFor = options.paused.calls;
    run.#settledSeq = options.paused.seq ?? 0;
    run.#sent = true;
    options.transport.track(run);
    return run;
  }

  get runKey(): string {
    return this.#runKey;
  }

  /** The worker running it, once one took it. */
  get worker(): string | undefined {
    return this.#worker;
  }

  get lastText(): string {
    return this.#state.lastText;
  }

  get streamedSinceCall(): string {
    return this.#state.streamedSinceCall;
  }

  get usage(): { promptTokens: number; completionTokens: number } {
    return this.#state.usage;
  }

  get finished(): RecordedRun | undefined {
    return this.#finished;
  }

  get waitingFor(): ClientCall[] {
    return this.#waitingFor;
  }

  get waitingApproval(): ApprovalCall | undefined {
    return this.#waitingApproval;
  }

  start(): void {
    this.#attempts++;
    // A new attempt (another worker) numbers its events from 1 again.
    this.#settledSeq = 0;
    this.#missing = undefined;
    this.#runKey = this.#transport.newRunKey();
    this.#transport.enqueue(this, { ...this.#job, runKey: this.#runKey, server: this.#transport.serverId });
  }

  next(listener: RunListener | undefined): Promise<RunOutcome> {
    this.#listener = listener;
    return this.#outcome.promise;
  }

  resume(results: ReadonlyMap<string, string>): void {
    this.#waitingFor = [];
    this.#send({ run: this.#runKey, type: "resume", results: [...results], server: this.#transport.serverId });
  }

  missingResults(results: ReadonlyMap<string, string>): string[] {
    return this.#waitingFor.filter((call) => !results.has(call.id)).map((call) => call.id);
  }

  answerApproval(allowed: boolean): void {
    this.#waitingApproval = undefined;
    this.#send({ run: this.#runKey, type: "approve", allowed, server: this.#transport.serverId });
  }

  abort(reason: unknown): void {
    if (this.#finished || this.#moved) return;
    this.#abortReason ??= reason;
    const message = reason instanceof Error ? reason.message : String(reason);
    if (this.#worker !== undefined) return this.#send({ run: this.#runKey, type: "cancel", message });
    // Not taken yet: off the list (a worker taking it now finds it marked cancelled, and says it ended).
    void this.#transport.withdraw(this.#runKey).then((removed) => {
      if (removed) this.#end(endedWithout(reason instanceof Error ? reason : new InterruptedError("interrupted", message)));
    });
  }

  /** One event of its worker, in order. */
  onEvent(event: RunEvent): void {
    if (this.#finished) return;
    if ("seq" in event && event.seq !== undefined) {
      if (event.seq <= this.#settledSeq) return;
      this.#settledSeq = event.seq;
    }
    switch (event.type) {
      case "started":
        this.#worker = event.worker;
        if (this.#abortReason !== undefined) this.abort(this.#abortReason);
        return;
      case "text":
        this.#sent = true;
        this.#listener?.text?.(event.delta);
        return;
      case "reply":
        // Progress, not the answer (A2A shows it as a status message): a replacement run shows it again, harmlessly.
        this.#listener?.event?.({ type: "model_reply", agent: event.agent, round: event.round, text: event.text, toolCalls: event.toolCalls, usage: { promptTokens: 0, completionTokens: 0 } });
        return;
      case "paused":
        this.#sent = true;
        this.#state = event.state;
        this.#waitingFor = event.calls;
        return this.#pause({ type: "paused", calls: event.calls, text: event.text });
      case "approval":
        this.#sent = true;
        this.#state = event.state;
        this.#waitingApproval = event.call;
        return this.#pause({ type: "approval", call: event.call });
      case "finished": {
        this.#state = event.state;
        const run = fromWire(event.result);
        // Cancelled from here: the reason given here (a client's cancel reads as such), not the worker's copy.
        if (!run.ok && this.#abortReason instanceof Error && run.error instanceof InterruptedError) run.error = this.#abortReason;
        return this.#end(run);
      }
      case "given_back":
        this.#state = event.state;
        // Cancelled from here meanwhile: it ends for that reason (a client's cancel reads as such), as `finished` does.
        if (this.#abortReason instanceof Error) return this.#end(endedWithout(this.#abortReason));
        return this.workerLost();
      case "moved":
        // Its client went on through another server: this one forgets it.
        this.#moved = true;
        this.#transport.release(this.#runKey);
        this.#settle(endedWithout(new InterruptedError("interrupted", "the run went on through another server")));
        return;
    }
  }

  /**
   * How the run stands as its worker kept it (see `settledKey`), taken when its message never came: when it is still
   * missing `RECOVER_AFTER_MS` later, at a later look (a message on its way, after the text before it, is not
   * overtaken; meanwhile the run is `missing`, not lost with a worker that just stopped). A run whose "started" was
   * lost too learns its worker here. A record addressed to another server: the run went on there (its client's next
   * request landed there) and the message that said so was lost.
   */
  recover(record: SettledRecord): void {
    if (this.#finished || this.#moved || record.event.run !== this.#runKey) return;
    const seq = record.event.seq ?? 0;
    if (seq <= this.#settledSeq) return;
    if (this.#missing?.seq !== seq) {
      this.#missing = { seq, since: Date.now() };
      return;
    }
    if (Date.now() - this.#missing.since < RECOVER_AFTER_MS) return;
    if (record.server !== this.#transport.serverId) return this.onEvent({ run: this.#runKey, type: "moved" });
    if (this.#worker === undefined && record.event.type !== "started") this.onEvent({ run: this.#runKey, type: "started", worker: record.worker });
    this.onEvent(record.event);
  }

  /** Whether a settled event of the run was seen kept and not yet taken (its worker may have stopped just after). */
  get missing(): boolean {
    return this.#missing !== undefined && this.#missing.seq > this.#settledSeq;
  }

  /** Its worker is gone (its heartbeat expired). */
  workerLost(): void {
    if (this.#finished || this.#moved) return;
    const lost = this.#worker;
    this.#transport.release(this.#runKey);
    if (!this.#sent && this.#abortReason === undefined && this.#attempts < MAX_ATTEMPTS) {
      // Nothing reached the client: another worker runs it from the start, unseen.
      this.#worker = undefined;
      return this.start();
    }
    this.#end(endedWithout(new WorkerLostError(lost ?? "unknown", this.#state.streamedSinceCall.length)));
  }

  /** Every live worker refuses its tactic: the run, taken by none, ends with their reasons (`queue_refused`). */
  refused(error: Error): void {
    if (this.#finished || this.#moved) return;
    this.#end(endedWithout(error));
  }

  /** The queue is gone for this server (its Redis stayed away): the run ends with that error, wherever it was. */
  queueLost(error: Error): void {
    if (this.#finished || this.#moved) return;
    this.#end(endedWithout(error));
  }

  #send(command: RunCommand): void {
    if (this.#worker !== undefined) this.#transport.command(this.#worker, command);
  }

  #pause(outcome: RunOutcome): void {
    const paused = this.#outcome;
    this.#renewOutcome();
    paused.resolve(outcome);
  }

  #end(run: RecordedRun): void {
    if (this.#finished) return;
    this.#finished = run;
    this.#transport.release(this.#runKey);
    this.#outcome.resolve({ type: "finished", run });
    this.#settle(run);
  }

  #renewOutcome(): void {
    let resolve!: (outcome: RunOutcome) => void;
    const promise = new Promise<RunOutcome>((settle) => (resolve = settle));
    this.#outcome = { promise, resolve };
  }
}
