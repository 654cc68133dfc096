import type { ModelRequest, ModelResponse } from "../../providers/Model.js";

/** One model request of a batch job: the live request body, under an id that finds its item and turn again. */
export interface BatchRequestLine {
  customId: string;
  body: Record<string, unknown>;
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
 * A provider's batch API, as `lllm batch --provider-batch` uses it. The answers are the raw reply bodies of the
 * live API (`reply`), read by the same code as a live reply (`readReply`).
 */
export interface BatchApi {
  /** `openai`, `anthropic`, `gemini`. */
  readonly provider: string;
  /** The largest job: requests and bytes of request bodies. */
  readonly maxRequests: number;
  readonly maxBytes: number;
  /** Submit a job, labelled with `submission` (a key lllm recorded before: see `find`); returns its id. */
  submit(lines: BatchRequestLine[], submission: string, signal?: AbortSignal): Promise<string>;
  /**
   * The id of the job submitted with this key, if the provider has it: lllm killed between submitting a job and
   * recording its id finds it again instead of submitting it twice. Undefined when not found; `find` absent when the
   * provider's jobs carry no label (Anthropic).
   */
  find?(submission: string, signal?: AbortSignal): Promise<string | undefined>;
  status(jobId: string, signal?: AbortSignal): Promise<BatchJobStatus>;
  /** The results of an ended (or failed, expired, cancelled: what finished of it) job. */
  results(jobId: string, signal?: AbortSignal): Promise<BatchLineResult[]>;
  cancel(jobId: string, signal?: AbortSignal): Promise<void>;
  /** The live request body of a model request (byte for byte what the live model sends). */
  requestBody(request: ModelRequest): Record<string, unknown>;
  /** The live code's reading of a reply body. */
  readReply(reply: unknown, request: Record<string, unknown>): ModelResponse;
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
