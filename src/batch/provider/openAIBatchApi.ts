import { NO_KEY, type OpenAIModelOptions } from "../../providers/OpenAIEndpoint.js";
import { readChatCompletion } from "../../providers/readChatAnswer.js";
import { chatRequestBody } from "../../providers/OpenAIChatModel.js";
import { BatchHttpError, BatchResultsError, type BatchApi, type BatchDialog, type BatchJobState, type BatchJobStatus, type BatchLineResult, type BatchRequestLine, type BatchResults } from "./BatchApi.js";
import { batchHttp, batchJson, type BatchHttpOptions } from "./batchHttp.js";
import { downloadResults, resultLineLimit, type ResultsDownload } from "./downloadResults.js";
import { withJsonlFile } from "./jsonlUpload.js";
import { FileBody } from "../../util/FileBody.js";

/** OpenAI's limits of one batch: 50,000 requests, a 200 MB input file (kept under, for the JSONL's framing). */
const MAX_REQUESTS = 50_000;
const MAX_BYTES = 190 * 1024 * 1024;
/** Output files are far larger than one reply: read up to 1 GB. */
const MAX_RESULTS_BYTES = 1024 * 1024 * 1024;

const STATES: Record<string, BatchJobState> = { validating: "running", in_progress: "running", finalizing: "running", cancelling: "running", completed: "ended", failed: "failed", expired: "expired", cancelled: "cancelled" };

/**
 * OpenAI's Batch API (`/v1/files` + `/v1/batches`) for chat completions: the JSONL of requests is uploaded, the job
 * created, polled, and its output and error files read. Each line's `body` is the live request body, each result's
 * `response.body` is read by the live reader.
 */
export class OpenAIBatchApi implements BatchApi {
  readonly provider = "openai";
  readonly maxRequests = MAX_REQUESTS;
  readonly maxBytes = MAX_BYTES;
  readonly #root: string;
  readonly #http: BatchHttpOptions;
  readonly #download: BatchHttpOptions;
  readonly #wireModel: string;
  readonly #maxLineBytes: number;

  constructor(options: OpenAIModelOptions) {
    const { endpoint } = options;
    this.#wireModel = options.model ?? options.name;
    this.#root = endpoint.baseURL.replace(/\/+$/, "");
    const headers: Record<string, string> = { authorization: `Bearer ${endpoint.apiKey ?? NO_KEY}` };
    if (endpoint.organization) headers["openai-organization"] = endpoint.organization;
    if (endpoint.project) headers["openai-project"] = endpoint.project;
    this.#http = { headers, ...(options.transport ? { transport: options.transport } : {}) };
    this.#download = { headers, transport: { ...options.transport, maxReplyBytes: MAX_RESULTS_BYTES } };
    this.#maxLineBytes = resultLineLimit(options.transport);
  }

  async submit(lines: Iterable<BatchRequestLine>, submission: string, signal?: AbortSignal): Promise<string> {
    const fileId = await withJsonlFile(
      (function* () {
        for (const line of lines) yield `{"custom_id":${JSON.stringify(line.customId)},"method":"POST","url":"/v1/chat/completions","body":${line.body}}`;
      })(),
      async (requests) => {
        const form = FileBody.multipart({ purpose: "batch" }, { field: "file", name: "requests.jsonl", type: "application/jsonl", ...requests });
        const file = await batchJson(this.#http, `${this.#root}/files`, { method: "POST", body: form, signal });
        return stringField(file, "id", "/files");
      },
    );
    const job = await batchJson(this.#http, `${this.#root}/batches`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input_file_id: fileId, endpoint: "/v1/chat/completions", completion_window: "24h", metadata: { created_by: "lllm", lllm_submission: submission } }),
      signal,
    });
    return stringField(job, "id", "/batches");
  }

  async find(submission: string, signal?: AbortSignal): Promise<string | undefined> {
    // The newest jobs first: the one looked for was created moments before lllm stopped.
    const list = await batchJson(this.#http, `${this.#root}/batches?limit=100`, { signal });
    const data = Array.isArray(list["data"]) ? (list["data"] as Array<{ id?: unknown; metadata?: { lllm_submission?: unknown } | null }>) : [];
    const found = data.find((job) => job.metadata?.lllm_submission === submission);
    return typeof found?.id === "string" ? found.id : undefined;
  }

  async status(jobId: string, signal?: AbortSignal): Promise<BatchJobStatus> {
    const job = await batchJson(this.#http, `${this.#root}/batches/${encodeURIComponent(jobId)}`, { signal });
    const providerState = String(job["status"]);
    const counts = (job["request_counts"] ?? {}) as { total?: number; completed?: number; failed?: number };
    const errors = (job["errors"] as { data?: Array<{ message?: string }> } | null | undefined)?.data;
    return {
      state: STATES[providerState] ?? "running",
      providerState,
      ...(typeof counts.total === "number" ? { total: counts.total } : {}),
      ...(typeof counts.completed === "number" ? { done: counts.completed } : {}),
      ...(typeof counts.failed === "number" ? { failed: counts.failed } : {}),
      ...(errors && errors.length > 0 ? { message: errors.map((error) => error.message).join("; ") } : {}),
    };
  }

  async results(jobId: string, signal?: AbortSignal): Promise<BatchResults> {
    const job = await batchJson(this.#http, `${this.#root}/batches/${encodeURIComponent(jobId)}`, { signal });
    const downloads: ResultsDownload[] = [];
    for (const [key, name] of [["output_file_id", "the output file"], ["error_file_id", "the error file"]] as const) {
      const fileId = job[key];
      if (typeof fileId !== "string" || fileId === "") continue;
      downloads.push({ name: `${name} ${fileId}`, fetch: () => batchHttp(this.#download, `${this.#root}/files/${encodeURIComponent(fileId)}/content`, { signal }) });
    }
    return downloadResults(downloads, { maxLineBytes: this.#maxLineBytes, toResult: readResultLine });
  }

  async cancel(jobId: string, signal?: AbortSignal): Promise<void> {
    await batchJson(this.#http, `${this.#root}/batches/${encodeURIComponent(jobId)}/cancel`, { method: "POST", signal });
  }

  /** Chat completions carry nothing from one answer to the next request (tool call ids are in the messages). */
  dialog(): BatchDialog {
    return { turn: (request) => ({ body: chatRequestBody(this.#wireModel, request) as unknown as Record<string, unknown>, read: readChatCompletion }) };
  }
}

/** A line of an output or error file: `{custom_id, response: {status_code, body}, error}`. */
function readResultLine(line: Record<string, unknown>, where: string): BatchLineResult {
  const customId = line["custom_id"];
  if (typeof customId !== "string" || customId === "") throw new BatchResultsError(`${where} has no \`custom_id\``);
  const response = line["response"] as { status_code?: unknown; body?: unknown } | null | undefined;
  const error = line["error"] as { message?: unknown } | null | undefined;
  const status = typeof response?.status_code === "number" ? response.status_code : undefined;
  if (response && status === 200) return { customId, reply: response.body };
  const body = response?.body as { error?: { message?: unknown } } | null | undefined;
  const message = [body?.error?.message, error?.message].find((text) => typeof text === "string") as string | undefined;
  return { customId, error: { ...(status !== undefined ? { status } : {}), message: message ?? `HTTP ${status ?? "?"}` } };
}

function stringField(value: Record<string, unknown>, key: string, where: string): string {
  const field = value[key];
  if (typeof field !== "string" || field === "") throw new BatchHttpError(200, `${where}: the answer has no \`${key}\``);
  return field;
}
