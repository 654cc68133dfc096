import type { IncomingMessage } from "node:http";
import { badRequest, HttpError } from "./HttpError.js";

/** Limits of a request's body. */
export interface BodyLimits {
  /** The largest body read, in bytes; a larger one is a 413. */
  maxBytes: number;
  /** How long the whole body may take to arrive, in milliseconds; a slower client gets a 408. */
  timeoutMs: number;
}

/**
 * The request's body as JSON: `application/json` (415 otherwise), at most `maxBytes` (413, said as soon as the
 * declared length or the bytes read pass it, and the connection is closed after the answer rather than reading the
 * rest), within `timeoutMs` (408), valid JSON (400).
 */
export async function readJsonBody(request: IncomingMessage, limits: BodyLimits): Promise<unknown> {
  const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") {
    throw new HttpError(415, `the body must be JSON, sent with \`Content-Type: application/json\` (got ${type === "" ? "no content type" : `\`${type}\``})`, { code: "unsupported_media_type" });
  }
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limits.maxBytes) throw tooLarge(declared, limits.maxBytes);
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      cleanup();
      reject(new HttpError(408, `the body did not arrive within ${Math.round(limits.timeoutMs / 1000)} s`, { code: "request_timeout", headers: { Connection: "close" } }));
    }, limits.timeoutMs);
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limits.maxBytes) {
        cleanup();
        reject(tooLarge(size, limits.maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      request.off("data", onData).off("end", onEnd).off("error", onError);
    };
    request.on("data", onData).once("end", onEnd).once("error", onError);
  });
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw badRequest(`the body is not valid JSON: ${(error as Error).message}`, null, "invalid_json");
  }
}

function tooLarge(size: number, max: number): HttpError {
  // The rest of the body is not read: the connection closes once the answer is sent.
  return new HttpError(413, `the body (${size} bytes or more) is over the limit of ${max} bytes`, { code: "request_too_large", headers: { Connection: "close" } });
}
