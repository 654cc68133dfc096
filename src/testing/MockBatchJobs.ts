import type { MockRequestBody } from "./RecordedRequest.js";

/** How the mocks' batch jobs behave: they end `delayMs` after submission (default 0: at the first poll after). */
export interface MockBatchOptions {
  delayMs?: number;
  /** Refuse one request of a job (its result is that request's 400 with this message); undefined answers it. */
  reject?: (body: MockRequestBody) => string | undefined;
  /** Answer a job's creation this much later (the job exists meanwhile): a client killed in between must find it again. */
  createDelayMs?: number;
  /**
   * Rewrite an ended job's results as served, to try a client on damaged ones: each line is one result as the
   * provider writes it (a line of OpenAI's output file, of Anthropic's results file, or one of Gemini's inline
   * responses as JSON). What comes back is served as is, one per line (Gemini's inside its JSON array).
   */
  resultLines?: (lines: string[], job: MockBatchJob) => string[];
  /**
   * What the jobs' ids start with (each ends with its number) instead of the provider's usual prefix: a test gives
   * one with a line break or a control character, as a hostile provider could.
   */
  jobIdPrefix?: string;
}

/** What the next submitted job does instead of ending with answers: fail, expire, or be cancelled (no answers). */
export type MockBatchOutcome = "failed" | "expired" | "cancelled";

export type MockBatchResult = { customId: string; ok: true; answer: unknown } | { customId: string; ok: false; status: number; message: string };

export interface MockBatchJob {
  id: string;
  requests: Array<{ customId: string; body: MockRequestBody }>;
  createdAt: number;
  /** What the client labelled the job with (OpenAI's `metadata`, Gemini's `displayName`). */
  label?: unknown;
  state: "running" | "ended" | MockBatchOutcome;
  /** Set when the job ended with answers. */
  results?: MockBatchResult[];
  /** Served when the job was made to end another way. */
  outcome?: MockBatchOutcome;
}

/**
 * The batch jobs of a mock provider server: created from submitted requests, ended at the first look `delayMs`
 * after submission, each request then answered as a live call would be (the server's script or handler). A test
 * can make the next jobs fail, expire or be cancelled, and the next status polls fail with an HTTP status.
 */
export class MockBatchJobs {
  readonly jobs = new Map<string, MockBatchJob>();
  readonly #outcomes: MockBatchOutcome[] = [];
  readonly #pollFailures: number[] = [];
  readonly #options: MockBatchOptions;
  readonly #answer: (body: MockRequestBody) => Promise<unknown>;
  readonly #prefix: string;

  constructor(prefix: string, options: MockBatchOptions, answer: (body: MockRequestBody) => Promise<unknown>) {
    this.#prefix = options.jobIdPrefix ?? prefix;
    this.#options = options;
    this.#answer = answer;
  }

  /** Wait before answering a creation, as `createDelayMs` says. */
  async createDelay(): Promise<void> {
    const ms = this.#options.createDelayMs ?? 0;
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms).unref());
  }

  /** Jobs submitted so far. */
  get count(): number {
    return this.jobs.size;
  }

  /** The next jobs end this way (in order, one per job), without answers. */
  failNext(...outcomes: MockBatchOutcome[]): void {
    this.#outcomes.push(...outcomes);
  }

  /** The next status polls answer these HTTP statuses (500, 503: the client must poll on). */
  failPolls(...statuses: number[]): void {
    this.#pollFailures.push(...statuses);
  }

  /** The lines of a job's results as served: `resultLines` applied, when given. */
  served(lines: string[], job: MockBatchJob): string[] {
    return this.#options.resultLines ? this.#options.resultLines(lines, job) : lines;
  }

  /** The status a poll fails with, if one was asked for. */
  nextPollFailure(): number | undefined {
    return this.#pollFailures.shift();
  }

  create(requests: MockBatchJob["requests"], label?: unknown): MockBatchJob {
    const job: MockBatchJob = { id: `${this.#prefix}${this.jobs.size + 1}`, requests, createdAt: Date.now(), state: "running", ...(label !== undefined ? { label } : {}) };
    const outcome = this.#outcomes.shift();
    if (outcome) job.outcome = outcome;
    this.jobs.set(job.id, job);
    return job;
  }

  /** The job as it is now: ended (and answered) once its delay has passed. */
  async current(id: string): Promise<MockBatchJob | undefined> {
    const job = this.#find(id);
    if (!job || job.state !== "running" || Date.now() - job.createdAt < (this.#options.delayMs ?? 0)) return job;
    if (job.outcome) {
      job.state = job.outcome;
      return job;
    }
    const results: MockBatchResult[] = [];
    for (const request of job.requests) {
      const refusal = this.#options.reject?.(request.body);
      if (refusal !== undefined) results.push({ customId: request.customId, ok: false, status: 400, message: refusal });
      else results.push({ customId: request.customId, ok: true, answer: await this.#answer(request.body) });
    }
    if (job.state !== "running") return job; // cancelled meanwhile
    job.results = results;
    job.state = "ended";
    return job;
  }

  cancel(id: string): MockBatchJob | undefined {
    const job = this.#find(id);
    if (job && job.state === "running") job.state = "cancelled";
    return job;
  }

  /** The job of an id as it stands in a URL path (percent-encoded, when the id has characters a path cannot hold). */
  #find(id: string): MockBatchJob | undefined {
    const job = this.jobs.get(id);
    if (job) return job;
    try {
      return this.jobs.get(decodeURIComponent(id));
    } catch {
      return undefined; // not a percent-encoding: no job has it
    }
  }
}
