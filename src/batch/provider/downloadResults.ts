import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { collectYoungGarbage } from "../../util/collectYoungGarbage.js";
import { DEFAULT_MAX_REPLY_BYTES, type HttpTransport } from "../../util/nodeHttpFetch.js";
import { processTempDir } from "../../util/processTempDir.js";
import { readFileLines } from "../../util/readFileLines.js";
import { describeBytes, replyTooLargeIn } from "../../util/ReplyTooLarge.js";
import { secrets } from "../../util/redact.js";
import { BatchHttpError, BatchResultsError, type BatchLineResult, type BatchResults } from "./BatchApi.js";

/** What a results line holds beyond its reply: its custom id, status, ids (a few hundred bytes), with room to spare. */
const LINE_ENVELOPE_BYTES = 64 * 1024;

/** The longest results line read: a reply of the model clients' largest (`reply_size`, default 64 MB) in its envelope. */
export function resultLineLimit(transport: HttpTransport | undefined): number {
  return (transport?.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES) + LINE_ENVELOPE_BYTES;
}

/** One JSONL file of a job's results: what to call it in messages, and how to fetch it. */
export interface ResultsDownload {
  /** `the output file`, `the results`. */
  name: string;
  fetch: () => Promise<Response>;
}

export interface DownloadResultsOptions {
  /** A line longer than this (a reply past `reply_size`, with its envelope) makes the results unreadable. */
  maxLineBytes: number;
  /**
   * One parsed line as a result: undefined for a line that answers nothing (a request cancelled or expired); throws
   * a `BatchResultsError` for one of another shape (`where` names the file and line for its message).
   */
  toResult: (line: Record<string, unknown>, where: string) => BatchLineResult | undefined;
}

/**
 * Download a job's JSONL results into a temporary folder (at the network's pace: the lines are then read at the
 * pace of the items they wake, and a slow reader cannot make the connection time out), to be read as many times as
 * needed: never one string in memory, whatever the files' size. A line past `maxLineBytes` stops its download; it
 * and a line that is not a JSON object are a `BatchResultsError`, as is a file past the transport's size limit. A
 * download cut by the network is a `BatchHttpError` (0): polled again.
 */
export async function downloadResults(downloads: ResultsDownload[], options: DownloadResultsOptions): Promise<BatchResults> {
  const folder = processTempDir("lllm-batch-");
  const files: Array<{ name: string; file: string }> = [];
  try {
    for (const [index, download] of downloads.entries()) {
      const file = path.join(folder, `results-${index}.jsonl`);
      const response = await download.fetch();
      await saveTo(file, response, download.name, options.maxLineBytes);
      files.push({ name: download.name, file });
    }
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  return {
    read: async function* () {
      for (const { name, file } of files) {
        let number = 0;
        for await (const text of readFileLines(file)) {
          number += 1;
          if (text.trim() === "") continue;
          const where = `${name}, line ${number}`;
          let value: unknown;
          try {
            value = JSON.parse(text);
          } catch {
            // The line's start, to recognise it: redacted, as it goes into the store and the items' results.
            throw new BatchResultsError(secrets.redact(`${where} is not JSON: ${JSON.stringify(text.slice(0, 80))}${text.length > 80 ? "…" : ""}`));
          }
          if (typeof value !== "object" || value === null || Array.isArray(value)) throw new BatchResultsError(`${where} is not a JSON object`);
          const result = options.toResult(value as Record<string, unknown>, where);
          if (result) yield result;
        }
      }
    },
    close: () => rm(folder, { recursive: true, force: true }),
  };
}

/** Bytes of a download between two young-generation collections (see `collectYoungGarbage`). */
const COLLECT_EVERY_BYTES = 1024 * 1024;

/**
 * Save a download to `file`, its chunks' memory freed as it goes (a results file of 50 MB left 30 MB of them behind),
 * each line checked against `maxLineBytes` as it comes (a line of 300 MB stops at the limit, not at the end).
 */
async function saveTo(file: string, response: Response, name: string, maxLineBytes: number): Promise<void> {
  if (!response.body) return;
  let sinceCollect = 0;
  let lineBytes = 0;
  let lines = 1;
  try {
    await pipeline(
      Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>),
      new Transform({
        transform(chunk: Buffer, _encoding, done) {
          sinceCollect += chunk.length;
          if (sinceCollect >= COLLECT_EVERY_BYTES) {
            sinceCollect = 0;
            collectYoungGarbage();
          }
          for (let start = 0; ; ) {
            const end = chunk.indexOf(0x0a, start);
            lineBytes += (end === -1 ? chunk.length : end) - start;
            if (lineBytes > maxLineBytes) return done(new BatchResultsError(`${name}, line ${lines} is longer than ${describeBytes(maxLineBytes)} (a reply is at most \`reply_size\`)`));
            if (end === -1) break;
            lines += 1;
            lineBytes = 0;
            start = end + 1;
          }
          done(null, chunk);
        },
      }),
      createWriteStream(file, { mode: 0o600 }),
    );
  } catch (error) {
    if (error instanceof BatchResultsError) throw error;
    const tooLarge = replyTooLargeIn(error);
    if (tooLarge) throw new BatchResultsError(`${name} is larger than ${describeBytes(tooLarge.limitBytes)}`);
    throw new BatchHttpError(0, secrets.redact(`downloading ${name} failed: ${error instanceof Error ? error.message : String(error)}`));
  }
}
