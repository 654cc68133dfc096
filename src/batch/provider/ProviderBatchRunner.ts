import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { InterruptedError, ProviderError } from "../../errors.js";
import type { ModelResponse } from "../../providers/Model.js";
import type { BatchApi, BatchJobStatus, BatchRequestLine, BatchTurn } from "./BatchApi.js";
import { BatchHttpError } from "./BatchApi.js";
import { describeRefused, type RefusedAnswers } from "./checkResults.js";
import { pollJob } from "./pollJob.js";
import { providerText } from "./providerText.js";
import { JobCancellations } from "./JobCancellations.js";
import type { BatchJobStore, StoredAnswer, WaitingRange } from "./BatchJobStore.js";
import type { KnownRequest } from "./ItemHistory.js";

/** The requests of one provider endpoint and model settings: they go into the same jobs. */
export interface BatchGroup {
  /** The settings as JSON (stored with each job, to poll it again after a restart). */
  readonly config: string;
  readonly api: BatchApi;
  /** The estimated batch cost of a request body of this many bytes (for --max-cost), 0 when unknown. */
  estimate(bytes: number): number;
  /** The batch cost of an answer's usage, 0 when unknown. */
  costOf(usage: ModelResponse["usage"]): number;
}

export interface ProviderBatchRunnerOptions {
  store: BatchJobStore;
  /** The group of a stored job's settings (to poll jobs of an earlier run); undefined when it cannot be built. */
  groupOf: (config: string) => BatchGroup | undefined;
  /** `--poll-interval` in ms: polls that often; default from 10 s growing to 60 s. */
  pollIntervalMs?: number;
  /** How many items are running now, and whether more are being started: a round is submitted once no more are and they all wait for the model. */
  inFlight: () => number;
  starting?: () => boolean;
  /** How long queued requests wait for the other running items (slow tools) before they go anyway. */
  maxGatherMs?: number;
  /** How many times a request is submitted before its item fails (jobs that expire or fail again and again). */
  maxAttempts?: number;
  /**
   * Told when parked requests (see `park`) have their answers, or were given up, by item key: their items can run
   * again from their start and find them. It may name items that did not park in this run (resumed jobs): ignore them.
   */
  onReady?: (itemKeys: string[]) => void;
  /**
   * The batch must stop: a job was cancelled while it ran (`lllm batch --cancel`, the provider's console). Its
   * requests are not submitted again by this run; waiting items are cancelled (`failure` says why).
   */
  onStop?: (error: ProviderError) => void;
  say: (message: string) => void;
  warn: (message: string) => void;
}

interface Waiter {
  group: BatchGroup;
  turn: BatchTurn;
  resolve: (response: ModelResponse) => void;
  reject: (error: unknown) => void;
}

/** A request waiting in memory for its job (an item that waits in memory, `ask`). */
interface Queued {
  customId: string;
  group: BatchGroup;
  /** The request body's JSON text. */
  body: string;
  bytes: number;
}

function queued(customId: string, group: BatchGroup, turn: BatchTurn): Queued {
  const body = JSON.stringify(turn.body);
  return { customId, group, body, bytes: Buffer.byteLength(body) };
}

/** Parked requests' bodies read from the store in one query for a job's upload, and written in one transaction. */
const BODIES_AT_ONCE = 500;

/** What a request adds to a job's size beyond its body (its line's custom id and envelope), counted against the limit. */
const LINE_OVERHEAD = 200;

/**
 * Turns the model requests of a batch's running items into provider batch jobs. Each item's model asks here
 * (`ask`) and waits; once every running item waits, the queued requests go out as one job per endpoint (split at
 * the provider's limits), which is polled until it ends; its answers are stored, then handed to the waiting items,
 * which run their tools and ask again (the next round). A request already answered (an item resumed after a kill)
 * is answered from the store at once; one in a job still running at the provider waits for that job: nothing is
 * submitted twice. Requests a job did not answer (it expired, failed, was cancelled before this run, its answers
 * were refused) are submitted again; a job cancelled while this run polls it stops the run instead (`onStop`).
 */
export class ProviderBatchRunner {
  readonly #options: ProviderBatchRunnerOptions;
  readonly #waiters = new Map<string, Waiter>();
  /** Bodies of parked requests not yet in the store: written together, a few times a second. */
  #newBodies: Array<{ customId: string; body: string; bytes: number; group: number }> = [];
  /** How many parked requests wait in the store for a job, by batch group (their ids are not kept here). */
  readonly #waitingInStore = new Map<BatchGroup, number>();
  /** The number of each batch group in the store (`BatchJobStore.keepBodies`): 1, 2, … in the order first seen. */
  readonly #groupNumbers = new Map<BatchGroup, number>();
  /** Jobs whose answers are being read: the items they wake ask again soon, into the same round's job. */
  #taking = 0;
  #queue: Queued[] = [];
  #queuedSince = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Jobs being polled: id -> group and the estimated cost committed by it. */
  readonly #polling = new Map<string, { group: BatchGroup; committed: number }>();
  readonly #stop = new AbortController();
  readonly #pollers = new Set<Promise<void>>();
  /** Counts for the progress line. */
  jobsSubmitted = 0;
  jobsEnded = 0;
  /** When the oldest job still running was submitted (ms since the epoch). */
  readonly #submittedAt = new Map<string, number>();
  /** The batch cost of turns answered for items still running or parked (not yet in their result lines). */
  readonly #answeredCost = new Map<string, number>();
  /** The sum of `#answeredCost`, kept as it changes: `committedCost` is read for every item a batch pulls. */
  #answeredTotal = 0;
  readonly #cancellations: JobCancellations;
  /** Only the jobs at the provider are polled to their end: nothing is submitted (`collect`). */
  #collecting = false;
  #failure: ProviderError | undefined;
  /** Answers of ended jobs not used, over the batch (the summary says so). */
  readonly refused = { twice: 0, foreign: 0 };

  constructor(options: ProviderBatchRunnerOptions) {
    this.#options = options;
    this.#cancellations = new JobCancellations((jobId) => options.store.isCancelling(jobId));
  }

  /** Poll the jobs an earlier run left running (before any item asks). Returns how many. */
  async resumeJobs(): Promise<number> {
    let count = 0;
    for (const job of this.#options.store.jobs()) {
      if (job.state === "submitting") {
        // Killed between asking for the job and recording its id: ask the provider whether it has it.
        const group = this.#options.groupOf(job.config);
        const found = group?.api.find ? await group.api.find(job.jobId).catch(() => undefined) : undefined;
        if (found === undefined) {
          if (group && !group.api.find) this.#options.warn(`a ${job.provider} batch job was being submitted when lllm stopped; ${job.provider} cannot be asked whether it got it, so its ${job.requests} requests are submitted again (if it did, cancel the first job in the provider's console)`);
          this.#options.store.dropSubmission(job.jobId);
          continue;
        }
        this.#options.store.submitted(job.jobId, found);
        job.jobId = found;
        job.state = "running";
      }
      if (job.state !== "running" && job.state !== "cancelling") continue;
      this.#cancellations.resumed(job.jobId, job.state === "cancelling");
      const group = this.#options.groupOf(job.config);
      if (!group) {
        this.#options.warn(`cannot poll ${job.provider} job ${providerText(job.jobId)} again (its model settings are no longer in the tactic); its requests are submitted again`);
        this.#options.store.endJob(job.jobId, "failed", "unknown settings");
        continue;
      }
      this.#poll(job.jobId, group, job.committedCost, job.submittedAt);
      count += 1;
    }
    return count;
  }

  /** The estimated cost of submitted requests not answered yet, plus that of answered turns of unfinished items. */
  get committedCost(): number {
    let total = 0;
    for (const job of this.#polling.values()) total += job.committed;
    return total + this.#answeredTotal;
  }

  /** Jobs running at the provider now, and since when the oldest one runs. */
  get running(): { jobs: number; since?: number } {
    const times = [...this.#submittedAt.values()];
    return { jobs: this.#polling.size, ...(times.length > 0 ? { since: Math.min(...times) } : {}) };
  }

  /** Why the batch had to stop (a job cancelled while it ran), once it had to. */
  get failure(): ProviderError | undefined {
    return this.#failure;
  }

  /**
   * Poll the jobs at the provider until they end and store their answers (they are paid for: a rerun uses them),
   * submitting nothing: a batch that --max-cost stopped before it started their items. Resolves at once after
   * `detach` (Ctrl-C: the jobs keep running at the provider).
   */
  async collect(): Promise<void> {
    this.#collecting = true;
    clearTimeout(this.#timer);
    while (this.#pollers.size > 0 && !this.#stop.signal.aborted) await Promise.allSettled([...this.#pollers]);
  }

  /** Requests waiting in memory for a job to be submitted or to end (parked items are counted by the batch). */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** An item's result line is written: its answered turns are in its cost now. */
  itemDone(itemKey: string): void {
    this.#answeredTotal -= this.#answeredCost.get(itemKey) ?? 0;
    this.#answeredCost.delete(itemKey);
  }

  /**
   * A parked item runs again from its start: it reads its answered turns again, and they are counted again.
   * `parkedCost` is what they cost, as `itemParks` gave it when the item parked.
   */
  itemRestarts(itemKey: string, parkedCost: number): void {
    this.#answeredTotal -= parkedCost;
    this.itemDone(itemKey);
  }

  /** An item parks: the cost of its answered turns, kept with it (not here) and still counted as committed. */
  itemParks(itemKey: string): number {
    const cost = this.#answeredCost.get(itemKey) ?? 0;
    this.#answeredCost.delete(itemKey);
    return cost;
  }

  /**
   * The answer to one model request of an item that does not wait for it in memory: the stored answer at once, or
   * `undefined` when the request is now in (or on its way to) a job. The item then stops (it is parked), and
   * `onReady` says when to run it again from its start: its answered requests are then answered here, in order.
   * `history` is what the store knew of the request when the attempt started (see `ItemHistory`).
   */
  park(group: BatchGroup, customId: string, itemKey: string, turn: BatchTurn, history: KnownRequest | undefined): ModelResponse | undefined {
    if (this.#stop.signal.aborted) throw interrupted();
    // In a job when the history was read (one an earlier run submitted): it may have ended since.
    const known = history?.jobId !== undefined && history.answer === undefined ? (this.#options.store.request(customId) ?? history) : history;
    if (known?.answer) return this.#read(group, turn, known.answer, customId, itemKey);
    if (this.#waiters.has(customId)) throw new ProviderError("provider_batch_failed", `two model requests of one item have the id ${customId}`);
    // In a job still running (an earlier run submitted it): its poller tells.
    if (known?.jobId !== undefined && this.#polling.has(known.jobId)) return undefined;
    if ((known?.attempts ?? 0) >= (this.#options.maxAttempts ?? 3)) {
      throw new ProviderError("provider_batch_failed", `the request was submitted ${known?.attempts} times in provider batch jobs that ended without answering it (expired, failed or cancelled)`);
    }
    const body = JSON.stringify(turn.body);
    this.#newBodies.push({ customId, body, bytes: Buffer.byteLength(body), group: this.#numberOf(group) });
    if (this.#newBodies.length >= BODIES_AT_ONCE) this.#keepBodies();
    this.#waitInStore(group, 1);
    return undefined;
  }

  /** The answer to one model request of an item (`customId` names the item and the turn). */
  ask(group: BatchGroup, customId: string, itemKey: string, turn: BatchTurn, signal?: AbortSignal): Promise<ModelResponse> {
    if (this.#stop.signal.aborted) return Promise.reject(interrupted());
    const known = this.#options.store.request(customId);
    if (known?.answer) return Promise.resolve().then(() => this.#read(group, turn, known.answer!, customId, itemKey));
    if (this.#waiters.has(customId)) return Promise.reject(new ProviderError("provider_batch_failed", `two model requests of one item have the id ${customId}`));
    return new Promise<ModelResponse>((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters.delete(customId);
        this.#queue = this.#queue.filter((entry) => entry.customId !== customId);
        reject(signal?.reason ?? interrupted());
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = (): void => signal?.removeEventListener("abort", onAbort);
      this.#waiters.set(customId, {
        group,
        turn,
        resolve: (response) => {
          done();
          resolve(response);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      // In a job still running (an earlier run submitted it): its poller delivers the answer.
      if (known?.jobId !== undefined && this.#polling.has(known.jobId)) return;
      if ((known?.attempts ?? 0) >= (this.#options.maxAttempts ?? 3)) {
        this.#waiters.delete(customId);
        done();
        return reject(new ProviderError("provider_batch_failed", `the request was submitted ${known?.attempts} times in provider batch jobs that ended without answering it (expired, failed or cancelled)`));
      }
      this.#enqueue(queued(customId, group, turn));
    });
  }

  /** Stop: every waiting item is told (it is cancelled, not failed: a rerun picks its job up again). Jobs keep running at the provider. */
  async detach(): Promise<void> {
    this.#stop.abort();
    clearTimeout(this.#timer);
    this.#queue = [];
    this.#waitingInStore.clear();
    for (const [id, waiter] of this.#waiters) {
      this.#waiters.delete(id);
      waiter.reject(interrupted());
    }
    await Promise.allSettled([...this.#pollers]);
  }

  #enqueue(entry: Queued): void {
    if (this.#nothingQueued) this.#queuedSince = Date.now();
    this.#queue.push(entry);
    this.#schedule();
  }

  /** `count` more parked requests of `group` wait in the store. */
  #waitInStore(group: BatchGroup, count: number): void {
    if (this.#nothingQueued) this.#queuedSince = Date.now();
    this.#waitingInStore.set(group, (this.#waitingInStore.get(group) ?? 0) + count);
    this.#schedule();
  }

  get #nothingQueued(): boolean {
    return this.#queue.length === 0 && this.#waitingInStore.size === 0;
  }

  #numberOf(group: BatchGroup): number {
    let number = this.#groupNumbers.get(group);
    if (number === undefined) this.#groupNumbers.set(group, (number = this.#groupNumbers.size + 1));
    return number;
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#nothingQueued || this.#collecting) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#check();
    }, 50);
  }

  /** Submit the queue once every running item waits (a whole round), or when it has waited too long. */
  #check(): void {
    this.#keepBodies();
    if (this.#nothingQueued || this.#stop.signal.aborted || this.#collecting) return;
    const allWaiting = this.#taking === 0 && !(this.#options.starting?.() ?? false) && this.#waiters.size >= this.#options.inFlight();
    const tooLong = Date.now() - this.#queuedSince >= (this.#options.maxGatherMs ?? 30_000);
    if (!allWaiting && !tooLong) return this.#schedule();
    const queue = this.#queue;
    this.#queue = [];
    const byGroup = new Map<BatchGroup, Queued[]>();
    for (const entry of queue) {
      const entries = byGroup.get(entry.group);
      if (entries) entries.push(entry);
      else byGroup.set(entry.group, [entry]);
    }
    for (const [group, entries] of byGroup) {
      for (const chunk of split(entries, group.api)) this.#track(this.#submit(group, chunk));
    }
    const waiting = [...this.#waitingInStore.keys()];
    this.#waitingInStore.clear();
    for (const group of waiting) {
      const number = this.#numberOf(group);
      const ranges = this.#options.store.waiting(number, { maxRequests: group.api.maxRequests, maxBytes: group.api.maxBytes, overhead: LINE_OVERHEAD });
      for (const range of ranges) this.#track(this.#submitWaiting(group, number, range));
    }
  }

  /** Write the bodies of newly parked requests to the store, in one transaction. */
  #keepBodies(): void {
    if (this.#newBodies.length === 0) return;
    const bodies = this.#newBodies;
    this.#newBodies = [];
    this.#options.store.keepBodies(bodies);
  }

  #track(work: Promise<void>): void {
    this.#pollers.add(work);
    void work.finally(() => this.#pollers.delete(work));
  }

  /** Submit requests waiting in memory. */
  async #submit(group: BatchGroup, entries: Queued[]): Promise<void> {
    const committed = entries.reduce((sum, entry) => sum + group.estimate(entry.bytes), 0);
    const submittedAt = Date.now();
    const submission = randomUUID();
    this.#options.store.addSubmission({ provider: group.api.provider, config: group.config, requests: entries.length, committedCost: committed, submittedAt }, submission, entries.map((entry) => entry.customId));
    await this.#send(group, submission, { count: entries.length, committed, submittedAt }, () => entries, () => entries.map((entry) => entry.customId));
  }

  /** Submit a range of the parked requests waiting in the store: their bodies are read from it as the upload is written. */
  async #submitWaiting(group: BatchGroup, number: number, range: WaitingRange): Promise<void> {
    const committed = group.estimate(range.bytes - range.count * LINE_OVERHEAD);
    const submittedAt = Date.now();
    const submission = randomUUID();
    const count = this.#options.store.addWaitingSubmission({ provider: group.api.provider, config: group.config, requests: range.count, committedCost: committed, submittedAt }, submission, number, range);
    if (count === 0) return this.#options.store.dropSubmission(submission);
    await this.#send(group, submission, { count, committed, submittedAt }, () => this.#storedLines(submission), () => this.#options.store.requestsOf(submission));
  }

  /**
   * Send a recorded submission to the provider (its `lines` read again for each try), trying again on a transient
   * failure; then poll the job. A submission that cannot be made fails its requests (`ids`).
   */
  async #send(group: BatchGroup, submission: string, job: { count: number; committed: number; submittedAt: number }, lines: () => Iterable<BatchRequestLine>, ids: () => string[]): Promise<void> {
    const { api } = group;
    let jobId: string | undefined;
    for (let attempt = 1; jobId === undefined; attempt += 1) {
      try {
        jobId = await api.submit(lines(), submission, this.#stop.signal);
      } catch (error) {
        // Stopped while asking: the provider may have the job; the next run asks it (the submission stays recorded).
        if (this.#stop.signal.aborted) return;
        const transient = error instanceof BatchHttpError && error.transient;
        if (!transient || attempt >= 5) {
          const message = error instanceof Error ? error.message : String(error);
          const failed = ids();
          this.#options.store.dropSubmission(submission);
          for (const id of failed) this.#fail(id, new ProviderError("provider_batch_failed", `submitting the ${api.provider} batch job failed: ${message}`));
          return;
        }
        this.#options.warn(`submitting a ${api.provider} batch job failed (${error instanceof Error ? error.message : String(error)}); trying again`);
        await sleep(Math.min(30_000, 500 * 2 ** attempt), undefined, { signal: this.#stop.signal }).catch(() => undefined);
        if (this.#stop.signal.aborted) return;
        // The job may have been made before the answer was lost: then it is the one, not a second.
        jobId = api.find ? await api.find(submission, this.#stop.signal).catch(() => undefined) : undefined;
      }
    }
    this.#options.store.submitted(submission, jobId);
    this.jobsSubmitted += 1;
    this.#options.say(`submitted ${api.provider} batch job ${providerText(jobId)} (${job.count} request${job.count === 1 ? "" : "s"})`);
    this.#poll(jobId, group, job.committed, job.submittedAt);
  }

  /** The lines of a submission of parked requests, their bodies read from the store a chunk at a time. */
  *#storedLines(submission: string): Iterable<BatchRequestLine> {
    for (let after = ""; ; ) {
      const rows = this.#options.store.bodiesOf(submission, after, BODIES_AT_ONCE);
      for (const [customId, body] of rows) yield { customId, body };
      if (rows.length < BODIES_AT_ONCE) return;
      after = rows[rows.length - 1]![0];
    }
  }

  #poll(jobId: string, group: BatchGroup, committed: number, submittedAt: number): void {
    this.#polling.set(jobId, { group, committed });
    this.#submittedAt.set(jobId, submittedAt);
    const polled = pollJob({
      jobId,
      api: group.api,
      store: this.#options.store,
      ...(this.#options.pollIntervalMs !== undefined ? { pollIntervalMs: this.#options.pollIntervalMs } : {}),
      signal: this.#stop.signal,
      cancellations: this.#cancellations,
      deliver: (customIds) => this.#deliver(customIds),
      taking: (delta) => (this.#taking += delta),
      onRefused: (refused) => this.#tellRefused(jobId, group, refused),
      warn: this.#options.warn,
    });
    this.#track(
      polled
        .then((outcome) => {
          if (outcome.kind === "ended") this.#end(jobId, group, outcome.status, outcome);
          else if (outcome.kind === "cancelled") this.#stopForCancel(jobId, group, outcome.status);
        })
        .finally(() => {
          this.#polling.delete(jobId);
          this.#submittedAt.delete(jobId);
        }),
    );
  }

  /**
   * A job cancelled while the batch ran is final: nothing is submitted again in this run, which stops (the user
   * cancelled to stop paying). A rerun polls the job again, takes what it answered, and submits the rest.
   */
  #stopForCancel(jobId: string, group: BatchGroup, status: BatchJobStatus): void {
    const provider = group.api.provider;
    // Left to the next run to poll (even ended at the provider): it takes what the job answered.
    this.#options.store.setJobState(jobId, "running", status.providerState);
    if (this.#failure) return;
    this.#failure = new ProviderError("provider_batch_cancelled", `the ${provider} batch job ${providerText(jobId)} was cancelled while this batch ran (lllm batch --cancel, or the provider's console): the batch stopped, and submitted nothing again`, {
      hint: "Run the same command again to go on: it takes what the cancelled job answered, and submits its other requests again in a new job (paid again).",
    });
    this.#options.say(`${provider} batch job ${providerText(jobId)} was cancelled: the batch stops (its requests are not submitted again)`);
    this.#options.onStop?.(this.#failure);
    void this.detach();
  }

  /** Say which answers of a job are not used, and count them for the summary. */
  #tellRefused(jobId: string, group: BatchGroup, refused: RefusedAnswers): void {
    const text = describeRefused(refused);
    if (text === undefined) return;
    this.refused.twice += refused.twice.size;
    this.refused.foreign += refused.foreign;
    this.#options.warn(`${group.api.provider} batch job ${providerText(jobId)}: answers refused: ${text}`);
  }

  /** Hand stored answers to their items: waiting in memory (read back from the store), or parked (told ready). */
  #deliver(ids: readonly string[]): void {
    const parked: string[] = [];
    for (const id of ids) {
      const waiter = this.#waiters.get(id);
      if (!waiter) {
        // A parked item's (or one not started in this run, which finds the answer in the store when it starts).
        parked.push(itemKeyOf(id));
        continue;
      }
      this.#waiters.delete(id);
      try {
        const answer = this.#options.store.request(id)?.answer;
        if (!answer) throw new ProviderError("provider_batch_failed", `the answer to request ${id} is not in the run store`);
        waiter.resolve(this.#read(waiter.group, waiter.turn, answer, id, itemKeyOf(id)));
      } catch (error) {
        waiter.reject(error);
      }
    }
    if (parked.length > 0) this.#options.onReady?.(parked);
  }

  /** A job ended, its answers taken: its requests without one are submitted again (or given up). */
  #end(jobId: string, group: BatchGroup, status: BatchJobStatus, taken: { answered: number; refused: ReadonlySet<string> }): void {
    const { store } = this.#options;
    const { answered } = taken;
    const missing = store.requestsOf(jobId);
    store.endJob(jobId, status.state, status.providerState, this.#numberOf(group));
    this.jobsEnded += 1;
    const why = status.state === "ended" ? "" : ` (${status.state}${status.message ? `: ${providerText(status.message)}` : ""})`;
    this.#options.say(`${group.api.provider} batch job ${providerText(jobId)} ended${why}: ${answered} answer${answered === 1 ? "" : "s"}${missing.length > 0 ? `, ${missing.length} to submit again` : ""}`);
    let waitAgain = 0;
    for (const id of missing) {
      const waiter = this.#waiters.get(id);
      // A parked request's body waits in the store again (a suspended item's request from an earlier run has none: its item asks again).
      const kept = waiter ? false : store.body(id) !== undefined;
      if (!waiter && !kept) continue;
      const attempts = store.request(id)?.attempts ?? 0;
      if (attempts >= (this.#options.maxAttempts ?? 3)) {
        const unanswered = taken.refused.has(id) ? ", its id coming more than once in the job's results (no answer of it used)" : why;
        this.#fail(id, new ProviderError("provider_batch_failed", `the ${group.api.provider} batch job ${providerText(jobId)} ended without answering this request${unanswered}, after ${attempts} submissions`));
        continue;
      }
      if (kept) waitAgain += 1;
      else if (waiter) this.#enqueue(queued(id, waiter.group, waiter.turn));
    }
    if (waitAgain > 0) this.#waitInStore(group, waitAgain);
  }

  #fail(customId: string, error: unknown): void {
    const waiter = this.#waiters.get(customId);
    if (!waiter) {
      // A parked item reads the reason as its answer when it runs again, and fails with it.
      this.#options.store.giveUp(customId, error instanceof Error ? error.message : String(error));
      this.#options.onReady?.([itemKeyOf(customId)]);
      return;
    }
    this.#waiters.delete(customId);
    waiter.reject(error);
  }

  /** A stored answer as the live code reads it; the provider's refusal of the one request is the item's failure. */
  #read(group: BatchGroup, turn: BatchTurn, answer: StoredAnswer, customId: string, itemKey: string): ModelResponse {
    if ("failed" in answer) throw new ProviderError("provider_batch_failed", answer.failed);
    if ("error" in answer) {
      throw new ProviderError("provider_batch_request", `the provider refused this request in the batch${answer.error.status !== undefined ? ` (HTTP ${answer.error.status})` : ""}: ${answer.error.message}`);
    }
    let response: ModelResponse;
    try {
      response = turn.read(answer.reply, customId);
    } catch (error) {
      throw new ProviderError("provider_bad_response", `the batch answer cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    const usage = { ...response.usage, batch: true };
    const cost = group.costOf(usage);
    this.#answeredCost.set(itemKey, (this.#answeredCost.get(itemKey) ?? 0) + cost);
    this.#answeredTotal += cost;
    return { ...response, usage };
  }
}

/** `<item key>-<turn>`: the item's part of a custom id. */
export function itemKeyOf(customId: string): string {
  return customId.slice(0, customId.indexOf("-"));
}

function interrupted(): InterruptedError {
  return new InterruptedError("interrupted", "interrupted: the provider batch jobs keep running; run the same command again to pick them up");
}

/** Requests in jobs within the provider's limits of count and bytes. */
function split(entries: Queued[], api: BatchApi): Queued[][] {
  const chunks: Queued[][] = [];
  let current: Queued[] = [];
  let bytes = 0;
  for (const entry of entries) {
    if (current.length > 0 && (current.length >= api.maxRequests || bytes + entry.bytes + LINE_OVERHEAD > api.maxBytes)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += entry.bytes + LINE_OVERHEAD;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
