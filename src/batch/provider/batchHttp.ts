import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { modelFetch } from "../../providers/OpenAIEndpoint.js";
import type { HttpTransport } from "../../util/nodeHttpFetch.js";
import type { FileBody } from "../../util/FileBody.js";
import { collectYoungGarbage } from "../../util/collectYoungGarbage.js";
import { secrets } from "../../util/redact.js";
import { BatchHttpError } from "./BatchApi.js";
import { processTempDir } from "../../util/processTempDir.js";
import { readFileLines } from "../../util/readFileLines.js";

export interface BatchHttpOptions {
  headers: Record<string, string>;
  transport?: HttpTransport;
}

/**
 * One call of a batch API over the model clients' fetch (the key never follows a redirect to another origin). A
 * failure is a `BatchHttpError` whose text is the provider's message, redacted.
 */
export async function batchHttp(options: BatchHttpOptions, url: string, init: { method?: string; body?: string | FileBody; headers?: Record<string, string>; signal?: AbortSignal | undefined } = {}): Promise<Response> {
  const send = modelFetch(options.transport);
  let response: Response;
  try {
    response = await send(url, { method: init.method ?? "GET", headers: { ...options.headers, ...init.headers }, ...(init.body !== undefined ? { body: init.body as RequestInit["body"] } : {}), ...(init.signal ? { signal: init.signal } : {}) });
  } catch (error) {
    if (init.signal?.aborted) throw error;
    throw new BatchHttpError(0, secrets.redact(`cannot reach ${new URL(url).origin}: ${error instanceof Error ? error.message : String(error)}`));
  }
  if (response.ok) return response;
  const text = await response.text().catch(() => "");
  let message = text.slice(0, 500);
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const inner = typeof parsed.error === "object" ? parsed.error?.message : parsed.error ?? parsed.message;
    if (typeof inner === "string") message = inner;
  } catch {
    // not JSON: the text itself
  }
  throw new BatchHttpError(response.status, secrets.redact(`${init.method ?? "GET"} ${new URL(url).pathname}: HTTP ${response.status}${message ? `: ${message}` : ""}`));
}

export async function batchJson(options: BatchHttpOptions, url: string, init: Parameters<typeof batchHttp>[2] = {}): Promise<Record<string, unknown>> {
  const response = await batchHttp(options, url, init);
  const value = (await response.json().catch(() => undefined)) as unknown;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new BatchHttpError(response.status, `${new URL(url).pathname}: the answer is not a JSON object`);
  return value as Record<string, unknown>;
}

/**
 * The lines of a JSONL answer, parsed one by one (a job's results file of 50,000 answers is never one string in
 * memory); a line that is not JSON is skipped (its request is then resubmitted). The answer is saved to a temporary
 * file first, at the network's pace: the lines are then read at the pace of the items they wake, and a slow reader
 * cannot make the connection time out. The file is removed when the lines are read (or the reader stops).
 */
export async function* jsonLinesOf(response: Response): AsyncGenerator<unknown> {
  if (!response.body) return;
  const folder = processTempDir("lllm-batch-");
  try {
    const file = path.join(folder, "results.jsonl");
    await saveTo(file, response.body as import("node:stream/web").ReadableStream<Uint8Array>);
    for await (const line of readFileLines(file)) {
      if (line.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue; // a damaged line: its request has no result and runs again
      }
      yield value;
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** Bytes of a download between two young-generation collections (see `collectYoungGarbage`). */
const COLLECT_EVERY_BYTES = 1024 * 1024;

/** Save a download to `file`, its chunks' memory freed as it goes (a results file of 50 MB left 30 MB of them behind). */
async function saveTo(file: string, body: import("node:stream/web").ReadableStream<Uint8Array>): Promise<void> {
  let sinceCollect = 0;
  await pipeline(
    Readable.fromWeb(body),
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        sinceCollect += chunk.length;
        if (sinceCollect >= COLLECT_EVERY_BYTES) {
          sinceCollect = 0;
          collectYoungGarbage();
        }
        done(null, chunk);
      },
    }),
    createWriteStream(file, { mode: 0o600 }),
  );
}
