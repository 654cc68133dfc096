import type { BatchJobStatus } from "./BatchApi.js";

/**
 * Which jobs were cancelled while this run polled them, which is final for the run (it stops; see
 * `ProviderBatchRunner`), and which before it started: a rerun goes on with those, submitting their unanswered
 * requests again, as it does for any job that ended without answering. A job is cancelled while the run polls it
 * when `lllm batch --cancel` marks it so (`isMarked`), or the provider says so at a poll after the first (a job of
 * an earlier run found cancelled at its first poll was cancelled before this run).
 */
export class JobCancellations {
  readonly #before = new Set<string>();
  readonly #notPolledYet = new Set<string>();
  readonly #isMarked: (jobId: string) => boolean;

  constructor(isMarked: (jobId: string) => boolean) {
    this.#isMarked = isMarked;
  }

  /** A job of an earlier run, about to be polled; `marked` when `--cancel` marked it before this run. */
  resumed(jobId: string, marked: boolean): void {
    this.#notPolledYet.add(jobId);
    if (marked) this.#before.add(jobId);
  }

  /** Whether the job, just polled, was cancelled while this run polled it. */
  cancelledNow(jobId: string, status: BatchJobStatus): boolean {
    const firstPoll = this.#notPolledYet.delete(jobId);
    if (this.#before.has(jobId)) return false;
    if (this.#isMarked(jobId)) return true;
    if (status.state !== "cancelled") return false;
    if (firstPoll) this.#before.add(jobId);
    return !firstPoll;
  }
}
