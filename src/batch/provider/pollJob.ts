import { setTimeout as sleep } from "node:timers/promises";
import type { BatchApi, BatchJobStatus, BatchResults } from "./BatchApi.js";
import { BatchHttpError, BatchResultsError } from "./BatchApi.js";
import type { BatchJobStore, StoredAnswer } from "./BatchJobStore.js";
import { checkResults, type RefusedAnswers } from "./checkResults.js";
import type { JobCancellations } from "./JobCancellations.js";
import { providerText } from "./providerText.js";

export interface PollJobOptions {
  jobId: string;
  api: BatchApi;
  store: Pick<BatchJobStore, "setJobState" | "saveAnswers" | "requestsOf" | "request">;
  /** `--poll-interval` in ms: polls that often; default from 10 s growing to 60 s. */
  pollIntervalMs?: number;
  /** Aborted: stop polling (the job runs on at the provider). */
  signal: AbortSignal;
  cancellations: JobCancellations;
  /** Requests whose answers are stored: hand them to their items. */
  deliver: (customIds: readonly string[]) => void;
  /** Told when the job's answers start and stop being handed on (the items they wake ask again soon). */
  taking: (delta: 1 | -1) => void;
  /** Told of the job's answers that are not used (`checkResults`). */
  onRefused: (refused: RefusedAnswers) => void;
  warn: (message: string) => void;
}

/**
 * How polling a job ended: the job ended (its answers stored and handed on), was cancelled while this run polled it
 * (nothing of it taken: see `JobCancellations`), or polling stopped (`signal`).
 */
export type JobOutcome = { kind: "ended"; status: BatchJobStatus; answered: number; refused: ReadonlySet<string> } | { kind: "cancelled"; status: BatchJobStatus } | { kind: "stopped" };

/** Poll delays by default: 10 s, growing by half each time, up to 60 s. */
const FIRST_POLL_MS = 10_000;
const LAST_POLL_MS = 60_000;

/** Polls in a row whose answer cannot be read (not JSON) before the job is taken as failed. */
const UNREADABLE_POLLS = 5;

/** Answers stored (and handed on) at once. */
const ANSWERS_AT_ONCE = 500;

/**
 * Poll a job until it ends, then take its results. The network, a 5xx or a 429 is polled through (the job runs on at
 * the provider); a job the provider no longer knows (404), results that cannot be read (`BatchResultsError`: none of
 * them is used), or a status that cannot be read poll after poll end it as failed, with the reason.
 */
export async function pollJob(options: PollJobOptions): Promise<JobOutcome> {
  const { api, jobId, signal } = options;
  let delay = options.pollIntervalMs ?? FIRST_POLL_MS;
  let lastState = "";
  let failures = 0;
  let unreadable = 0;
  for (;;) {
    await sleep(delay, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) return { kind: "stopped" };
    if (options.pollIntervalMs === undefined) delay = Math.min(LAST_POLL_MS, delay * 1.5);
    let status: BatchJobStatus;
    let taken = { answered: 0, refused: new Set<string>() as ReadonlySet<string> };
    try {
      status = await api.status(jobId, signal);
      if (options.cancellations.cancelledNow(jobId, status)) return { kind: "cancelled", status };
      if (status.state !== "running") taken = await takeResults(await api.results(jobId, signal), options);
    } catch (error) {
      if (signal.aborted) return { kind: "stopped" };
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof BatchHttpError && error.status === 404) {
        status = { state: "failed", providerState: "not found", message };
      } else if (error instanceof BatchResultsError) {
        // Nothing of it was used: its requests are submitted again, as a failed job's.
        status = { state: "failed", providerState: "results unreadable", message: `its results cannot be read: ${message}` };
      } else if (error instanceof BatchHttpError && error.status >= 200 && error.status < 300 && (unreadable += 1) >= UNREADABLE_POLLS) {
        status = { state: "failed", providerState: "status unreadable", message: `its status cannot be read: ${message}` };
      } else {
        failures += 1;
        if (failures === 1 || failures % 10 === 0) options.warn(`polling ${api.provider} batch job ${providerText(jobId)} failed (${providerText(message)}); polling on`);
        continue;
      }
    }
    failures = 0;
    unreadable = 0;
    if (status.state !== "running") return { kind: "ended", status, ...taken };
    if (status.providerState !== lastState) options.store.setJobState(jobId, "running", status.providerState);
    lastState = status.providerState;
  }
}

/**
 * Check an ended job's results (`checkResults`: unreadable ones throw, and nothing of them is used), then store the
 * answers that hold, a few hundred per transaction, before any item wakes: a kill while the items run leaves the
 * job's answers whole in the store. Then hand them on a few hundred at a time, letting the items woken run between
 * (a job of 50,000 answers is never all in memory: its ids are). Read again after a kill, the answers already stored
 * are skipped.
 */
async function takeResults(results: BatchResults, options: PollJobOptions): Promise<{ answered: number; refused: ReadonlySet<string> }> {
  const { store, jobId } = options;
  options.taking(1);
  try {
    const pending = new Set(store.requestsOf(jobId));
    const refused = await checkResults(results, { pending, answeredBefore: (id) => store.request(id)?.answer !== undefined });
    options.onRefused(refused);
    const saved: string[] = [];
    let chunk = new Map<string, StoredAnswer>();
    const save = (): void => {
      // Only the job's requests still without an answer are saved: the store tells which.
      for (const id of store.saveAnswers(jobId, chunk)) saved.push(id);
      chunk = new Map();
    };
    for await (const result of results.read()) {
      if (!pending.has(result.customId) || refused.twice.has(result.customId)) continue;
      chunk.set(result.customId, "reply" in result ? { reply: result.reply } : { error: result.error });
      if (chunk.size >= ANSWERS_AT_ONCE) save();
    }
    if (chunk.size > 0) save();
    for (let start = 0; start < saved.length; start += ANSWERS_AT_ONCE) {
      // Let the items woken run (and ask again) before the next chunk wakes more.
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      options.deliver(saved.slice(start, start + ANSWERS_AT_ONCE));
    }
    return { answered: saved.length, refused: refused.twice };
  } finally {
    options.taking(-1);
    await results.close();
  }
}
