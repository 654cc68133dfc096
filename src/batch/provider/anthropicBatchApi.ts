import type { OpenAIModelOptions } from "../../providers/OpenAIEndpoint.js";
import { AnthropicDialog } from "../../providers/AnthropicDialog.js";
import { BatchHttpError, type BatchApi, type BatchDialog, type BatchJobStatus, type BatchLineResult, type BatchRequestLine } from "./BatchApi.js";
import { batchHttp, batchJson, jsonLinesOf, type BatchHttpOptions } from "./batchHttp.js";
import { withJsonArrayFile } from "./jsonlUpload.js";
import { FileBody } from "../../util/FileBody.js";

/** Anthropic's limits of one Message Batch: 100,000 requests, 256 MB. */
const MAX_REQUESTS = 100_000;
const MAX_BYTES = 250 * 1024 * 1024;
const MAX_RESULTS_BYTES = 1024 * 1024 * 1024;
const ANTHROPIC_VERSION = "2023-06-01";

/**
 * Anthropic's Message Batches (`/v1/messages/batches`): create with every request's live `params`, poll, read the
 * results JSONL. Each succeeded result's `message` is read by the live reader.
 */
export class AnthropicBatchApi implements BatchApi {
  readonly provider = "anthropic";
  readonly maxRequests = MAX_REQUESTS;
  readonly maxBytes = MAX_BYTES;
  readonly #root: string;
  readonly #http: BatchHttpOptions;
  readonly #download: BatchHttpOptions;
  readonly #wireModel: string;

  constructor(options: OpenAIModelOptions) {
    this.#root = `${options.endpoint.baseURL.replace(/\/+$/, "")}/v1/messages/batches`;
    this.#wireModel = options.model ?? options.name;
    const headers: Record<string, string> = { "anthropic-version": ANTHROPIC_VERSION };
    if (options.endpoint.apiKey !== undefined) headers["x-api-key"] = options.endpoint.apiKey;
    this.#http = { headers, ...(options.transport ? { transport: options.transport } : {}) };
    this.#download = { headers, transport: { ...options.transport, maxReplyBytes: MAX_RESULTS_BYTES } };
  }

  async submit(lines: Iterable<BatchRequestLine>, _submission: string, signal?: AbortSignal): Promise<string> {
    const items = (function* () {
      for (const line of lines) yield `{"custom_id":${JSON.stringify(line.customId)},"params":${line.body}}`;
    })();
    const job = await withJsonArrayFile('{"requests":[', items, "]}", (requests) => batchJson(this.#http, this.#root, { method: "POST", headers: { "content-type": "application/json" }, body: new FileBody([requests], "application/json"), signal }));
    const id = job["id"];
    if (typeof id !== "string" || id === "") throw new BatchHttpError(200, "/v1/messages/batches: the answer has no `id`");
    return id;
  }

  async status(jobId: string, signal?: AbortSignal): Promise<BatchJobStatus> {
    const job = await batchJson(this.#http, `${this.#root}/${encodeURIComponent(jobId)}`, { signal });
    const providerState = String(job["processing_status"]);
    const counts = (job["request_counts"] ?? {}) as Record<string, number | undefined>;
    const failed = (counts["errored"] ?? 0) + (counts["expired"] ?? 0) + (counts["canceled"] ?? 0);
    const done = (counts["succeeded"] ?? 0) + failed;
    return { state: providerState === "ended" ? "ended" : "running", providerState, done, failed, total: done + (counts["processing"] ?? 0) };
  }

  async *results(jobId: string, signal?: AbortSignal): AsyncGenerator<BatchLineResult> {
    const job = await batchJson(this.#http, `${this.#root}/${encodeURIComponent(jobId)}`, { signal });
    // `results_url` only says that the results are ready: they are read from the API's own address, so that the key
    // never goes to an origin an answer names.
    const url = job["results_url"];
    if (typeof url !== "string" || url === "") return;
    const response = await batchHttp(this.#download, `${this.#root}/${encodeURIComponent(jobId)}/results`, { signal });
    for await (const raw of jsonLinesOf(response)) {
      const line = raw as { custom_id?: unknown; result?: { type?: string; message?: unknown; error?: { error?: { message?: string; type?: string }; message?: string } } };
      if (typeof line.custom_id !== "string" || !line.result) continue;
      const { result } = line;
      if (result.type === "succeeded") yield { customId: line.custom_id, reply: result.message };
      else if (result.type === "errored") {
        const inner: { message?: string; type?: string } | undefined = result.error?.error ?? result.error;
        yield { customId: line.custom_id, error: { ...(inner?.type === "invalid_request_error" ? { status: 400 } : {}), message: inner?.message ?? "errored" } };
      }
      // canceled, expired: no result; the request is submitted again
    }
  }

  async cancel(jobId: string, signal?: AbortSignal): Promise<void> {
    await batchJson(this.#http, `${this.#root}/${encodeURIComponent(jobId)}/cancel`, { method: "POST", signal });
  }

  dialog(): BatchDialog {
    const dialog = new AnthropicDialog(this.#wireModel);
    return { turn: (request) => ({ body: dialog.requestBody(request), read: (reply) => dialog.readReply(reply, request) }) };
  }
}
