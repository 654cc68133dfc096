import type { ModelRequest, ModelResponse } from "../../providers/Model.js";

/** One model request of a batch job: the live request body, under an id that finds its item and turn again. */
export interface BatchRequestLine {
  customId: string;
  /** The live request body as JSON text: a parked request's is read from the store and sent as it was kept. */
  body: string;
}

/**
 * One model request of an item, as a job carries it: the live request body, and the live reading of its reply. The
 * reading may change what the item's next requests send (Anthropic's thinking blocks, Gemini's call parts).
 */
export interface BatchTurn {
  body: Record<string, unknown>;
  /** Read the answer to the request named `requestId` (its custom id: it names the calls a provider sent without one). */
  read(reply: unknown, requestId: string): ModelResponse;
}

/**
 * The model requests of one item's agent, in order: what the live model of that agent would send and keep between
 * its calls (the same code: `AnthropicDialog`, `GeminiDialog`). A resumed item reads its answered turns again in
 * order, so its dialog is rebuilt as it was.
 */
export interface BatchDialog {
  turn(request: ModelRequest): BatchTurn;
}

/** A job's state as lllm tracks it: running at the provider, or ended one way or another. */
export type BatchJobState = "running" | "ended" | "failed" | "expired" | "cancelled";

export interface BatchJobStatus {
  state: BatchJobState;
  /** The provider's own word for it (`in_progress`, `ended`, `BATCH_STATE_RUNNING`, …), shown by `--status`. */
  providerState: string;
  /** Requests done and failed so far, when the provider says. */
  done?: number;
  failed?: number;
  total?: number;
  /** Why the whole job failed, when it did. */
  message?: string;
}

/** The outcome of one request of an ended job. */
export type BatchLineResult = { customId: string; reply: unknown } | { customId: string; error: { status?: number; message: string } };

/**
 * The results of an ended job, fetched once and kept (in temporary files) until `close`: read once to check them
 * all, then again to store the answers, so that no answer of a job is used before the whole job's are known good.
 */
export interface BatchResults {
  /** The results in order; throws a `BatchResultsError` at one that is not a result. */
  read(): AsyncIterable<BatchLineResult>;
  close(): Promise<void>;
}

/**
 * A job's results that cannot be read as results: a line that is not a JSON object, is longer than any reply may be,
 * or has no custom id; a results file past its size limit. The job is then treated as failed, with this message.
 */
export class BatchResultsError extends Error {}

/**
 * A provider's batch API, as `lllm batch --provider-batch` uses it. The answers are the raw reply bodies of the
 * live API (`reply`), read by the same code as a live reply (a `BatchDialog`'s turns).
 */
export interface BatchApi {
  /** `openai`, `anthropic`, `gemini`. */
  readonly provider: string;
  /** The largest job: requests and bytes of request bodies. */
  readonly maxRequests: number;
  readonly maxBytes: number;
  /**
   * Submit a job, labelled with `submission` (a key lllm recorded before: see `find`); returns its id. `lines` is read
   * once, as the upload is written (their bodies may come from the store one by one).
   */
  submit(lines: Iterable<BatchRequestLine>, submission: string, signal?: AbortSignal): Promise<string>;
  /**
   * The id of the job submitted with this key, if the provider has it: lllm killed between submitting a job and
   * recording its id finds it again instead of submitting it twice. Undefined when not found; `find` absent when the
   * provider's jobs carry no label (Anthropic).
   */
  find?(submission: string, signal?: AbortSignal): Promise<string | undefined>;
  status(jobId: string, signal?: AbortSignal): Promise<BatchJobStatus>;
  /** The results of an ended (or failed, expired, cancelled: what finished of it) job. */
  results(jobId: string, signal?: AbortSignal): Promise<BatchResults>;
  cancel(jobId: string, signal?: AbortSignal): Promise<void>;
  /** A new dialog: one per agent of an item, as the live run has one model per agent. */
  dialog(): BatchDialog;
}

/** An HTTP failure of a batch API call: `status` 0 for a connection failure. Retried while polling when 5xx/0/429. */
export class BatchHttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }

  get transient(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}
