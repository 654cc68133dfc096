import type { OpenAIModelOptions } from "../../providers/OpenAIEndpoint.js";
import { GeminiDialog } from "../../providers/GeminiDialog.js";
import { BatchHttpError, BatchResultsError, type BatchApi, type BatchDialog, type BatchJobState, type BatchJobStatus, type BatchRequestLine, type BatchResults } from "./BatchApi.js";
import { resultLineLimit } from "./downloadResults.js";
import { describeBytes } from "../../util/ReplyTooLarge.js";
import { batchJson, type BatchHttpOptions } from "./batchHttp.js";
import { withJsonArrayFile } from "./jsonlUpload.js";
import { FileBody } from "../../util/FileBody.js";

/** Gemini's inline batch requests: up to 20 MB in all. */
const MAX_REQUESTS = 50_000;
const MAX_BYTES = 19 * 1024 * 1024;
const MAX_RESULTS_BYTES = 1024 * 1024 * 1024;

const STATES: Record<string, BatchJobState> = {
  BATCH_STATE_PENDING: "running",
  BATCH_STATE_RUNNING: "running",
  BATCH_STATE_SUCCEEDED: "ended",
  BATCH_STATE_FAILED: "failed",
  BATCH_STATE_CANCELLED: "cancelled",
  BATCH_STATE_EXPIRED: "expired",
};

/**
 * Gemini's batch mode (`models/{model}:batchGenerateContent` with inline requests, `batches/{id}`): each request is
 * the live `generateContent` body, each inline response is read by the live reader. Responses come in the order of
 * the requests, each with the request's `metadata.key`.
 */
export class GeminiBatchApi implements BatchApi {
  readonly provider = "gemini";
  readonly maxRequests = MAX_REQUESTS;
  readonly maxBytes = MAX_BYTES;
  readonly #root: string;
  readonly #http: BatchHttpOptions;
  readonly #wireModel: string;
  /** The keys of a job's requests in order, for responses that come without their metadata. */
  readonly #keys = new Map<string, string[]>();
  readonly #maxLineBytes: number;

  constructor(options: OpenAIModelOptions) {
    this.#root = `${options.endpoint.baseURL.replace(/\/+$/, "")}/v1beta`;
    this.#wireModel = options.model ?? options.name;
    const headers: Record<string, string> = {};
    if (options.endpoint.apiKey !== undefined) headers["x-goog-api-key"] = options.endpoint.apiKey;
    this.#http = { headers, transport: { ...options.transport, maxReplyBytes: MAX_RESULTS_BYTES } };
    this.#maxLineBytes = resultLineLimit(options.transport);
  }

  async submit(lines: Iterable<BatchRequestLine>, submission: string, signal?: AbortSignal): Promise<string> {
    const keys: string[] = [];
    const items = (function* () {
      for (const line of lines) {
        keys.push(line.customId);
        yield `{"request":${line.body},"metadata":{"key":${JSON.stringify(line.customId)}}}`;
      }
    })();
    const head = `{"batch":{"displayName":${JSON.stringify(`lllm ${submission}`)},"inputConfig":{"requests":{"requests":[`;
    const url = `${this.#root}/models/${encodeURIComponent(this.#wireModel)}:batchGenerateContent`;
    const operation = await withJsonArrayFile(head, items, "]}}}}", (requests) => batchJson(this.#http, url, { method: "POST", headers: { "content-type": "application/json" }, body: new FileBody([requests], "application/json"), signal }));
    const name = operation["name"];
    if (typeof name !== "string" || !name.startsWith("batches/")) throw new BatchHttpError(200, ":batchGenerateContent: the answer has no `name` (batches/…)");
    const id = name.slice("batches/".length);
    this.#keys.set(id, keys);
    return id;
  }

  async find(submission: string, signal?: AbortSignal): Promise<string | undefined> {
    const list = await batchJson(this.#http, `${this.#root}/batches?pageSize=100`, { signal });
    const operations = Array.isArray(list["operations"]) ? (list["operations"] as Array<Record<string, unknown>>) : [];
    const found = operations.find((operation) => batchOf(operation)["displayName"] === `lllm ${submission}`);
    const name = found?.["name"];
    return typeof name === "string" && name.startsWith("batches/") ? name.slice("batches/".length) : undefined;
  }

  async status(jobId: string, signal?: AbortSignal): Promise<BatchJobStatus> {
    const operation = await this.#get(jobId, signal);
    const batch = batchOf(operation);
    const providerState = String(batch["state"] ?? "BATCH_STATE_PENDING");
    const stats = (batch["batchStats"] ?? {}) as Record<string, string | number | undefined>;
    const count = (key: string): number | undefined => (stats[key] === undefined ? undefined : Number(stats[key]));
    const error = operation["error"] as { message?: string } | undefined;
    const done = (count("successfulRequestCount") ?? 0) + (count("failedRequestCount") ?? 0);
    const total = count("requestCount");
    return { state: STATES[providerState] ?? "running", providerState, done, ...(count("failedRequestCount") !== undefined ? { failed: count("failedRequestCount")! } : {}), ...(total !== undefined ? { total } : {}), ...(error?.message ? { message: error.message } : {}) };
  }

  // Inline responses come in the job's own JSON: read whole (Gemini's inline jobs are capped at 20 MB anyway).
  async results(jobId: string, signal?: AbortSignal): Promise<BatchResults> {
    const operation = await this.#get(jobId, signal);
    const response = (operation["response"] ?? batchOf(operation)["output"] ?? {}) as { inlinedResponses?: { inlinedResponses?: unknown } };
    const list = response.inlinedResponses?.inlinedResponses ?? [];
    if (!Array.isArray(list)) throw new BatchResultsError("its `inlinedResponses` is not a list");
    const keys = this.#keys.get(jobId);
    const maxBytes = this.#maxLineBytes;
    return {
      read: async function* () {
        for (const [index, raw] of list.entries()) {
          const where = `inline response ${index + 1}`;
          if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new BatchResultsError(`${where} is not a JSON object`);
          if (JSON.stringify(raw).length > maxBytes) throw new BatchResultsError(`${where} is longer than ${describeBytes(maxBytes)} (a reply is at most \`reply_size\`)`);
          const line = raw as { response?: unknown; error?: { code?: unknown; message?: unknown } | null; metadata?: { key?: unknown } | null };
          const key = typeof line.metadata?.key === "string" ? line.metadata.key : keys?.[index];
          if (key === undefined || key === "") throw new BatchResultsError(`${where} has no \`metadata.key\``);
          if (line.error) yield { customId: key, error: { ...(typeof line.error.code === "number" ? { status: line.error.code } : {}), message: typeof line.error.message === "string" ? line.error.message : "error" } };
          else if (line.response !== undefined) yield { customId: key, reply: line.response };
        }
      },
      close: async () => undefined,
    };
  }

  async cancel(jobId: string, signal?: AbortSignal): Promise<void> {
    await batchJson(this.#http, `${this.#root}/batches/${encodeURIComponent(jobId)}:cancel`, { method: "POST", signal });
  }

  dialog(): BatchDialog {
    const dialog = new GeminiDialog();
    // Calls Gemini sent without an id are named after their request: the same names in every run of the item.
    return { turn: (request) => ({ body: dialog.requestBody(request), read: (reply, requestId) => dialog.readReply(reply, requestId) }) };
  }

  #get(jobId: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
    return batchJson(this.#http, `${this.#root}/batches/${encodeURIComponent(jobId)}`, { signal });
  }
}

/** The batch of an operation: its `metadata` (the REST answer of `batches.get`), or the object itself. */
function batchOf(operation: Record<string, unknown>): Record<string, unknown> {
  const metadata = operation["metadata"];
  return typeof metadata === "object" && metadata !== null ? (metadata as Record<string, unknown>) : operation;
}
