import type { OpenAIModelOptions } from "../../providers/OpenAIEndpoint.js";
import { AnthropicDialog } from "../../providers/AnthropicDialog.js";
import { BatchHttpError, BatchResultsError, type BatchApi, type BatchDialog, type BatchJobStatus, type BatchLineResult, type BatchRequestLine, type BatchResults } from "./BatchApi.js";
import { batchHttp, batchJson, type BatchHttpOptions } from "./batchHttp.js";
import { downloadResults, resultLineLimit } from "./downloadResults.js";
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
  readonly #maxLineBytes: number;

  constructor(options: OpenAIModelOptions) {
    this.#root = `${options.endpoint.baseURL.replace(/\/+$/, "")}/v1/messages/batches`;
    this.#wireModel = options.model ?? options.name;
    const headers: Record<string, string> = { "anthropic-version": ANTHROPIC_VERSION };
    if (options.endpoint.apiKey !== undefined) headers["x-api-key"] = options.endpoint.apiKey;
    this.#http = { headers, ...(options.transport ? { transport: options.transport } : {}) };
    this.#download = { headers, transport: { ...options.transport, maxReplyBytes: MAX_RESULTS_BYTES } };
    this.#maxLineBytes = resultLineLimit(options.transport);
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
    // A batch cancelled (by lllm batch --cancel, or in the console) ends as any other, its cancelled requests counted.
    const state = providerState !== "ended" ? "running" : (counts["canceled"] ?? 0) > 0 ? "cancelled" : "ended";
    return { state, providerState, done, failed, total: done + (counts["processing"] ?? 0) };
  }

  async results(jobId: string, signal?: AbortSignal): Promise<BatchResults> {
    const job = await batchJson(this.#http, `${this.#root}/${encodeURIComponent(jobId)}`, { signal });
    // `results_url` only says that the results are ready: they are read from the API's own address, so that the key
    // never goes to an origin an answer names.
    const url = job["results_url"];
    const downloads = typeof url === "string" && url !== "" ? [{ name: "the results", fetch: () => batchHttp(this.#download, `${this.#root}/${encodeURIComponent(jobId)}/results`, { signal }) }] : [];
    return downloadResults(downloads, { maxLineBytes: this.#maxLineBytes, toResult: readResultLine });
  }

  async cancel(jobId: string, signal?: AbortSignal): Promise<void> {
    await batchJson(this.#http, `${this.#root}/${encodeURIComponent(jobId)}/cancel`, { method: "POST", signal });
  }

  dialog(): BatchDialog {
    const dialog = new AnthropicDialog(this.#wireModel);
    return { turn: (request) => ({ body: dialog.requestBody(request), read: (reply) => dialog.readReply(reply, request) }) };
  }
}

/** A line of the results: `{custom_id, result: {type: succeeded | errored | canceled | expired, …}}`. */
function readResultLine(line: Record<string, unknown>, where: string): BatchLineResult | undefined {
  const customId = line["custom_id"];
  const result = line["result"] as { type?: unknown; message?: unknown; error?: { error?: { message?: unknown; type?: unknown }; message?: unknown; type?: unknown } | null } | null | undefined;
  if (typeof customId !== "string" || customId === "") throw new BatchResultsError(`${where} has no \`custom_id\``);
  if (typeof result !== "object" || result === null) throw new BatchResultsError(`${where} has no \`result\``);
  if (result.type === "succeeded") return { customId, reply: result.message };
  if (result.type === "errored") {
    const inner = result.error?.error ?? result.error;
    return { customId, error: { ...(inner?.type === "invalid_request_error" ? { status: 400 } : {}), message: typeof inner?.message === "string" ? inner.message : "errored" } };
  }
  if (result.type === "canceled" || result.type === "expired") return undefined; // no answer: the request is submitted again
  throw new BatchResultsError(`${where} has a result of unknown type ${JSON.stringify(result.type)}`);
}
