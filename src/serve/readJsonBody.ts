import type { IncomingMessage } from "node:http";
import { badRequest, HttpError } from "./HttpError.js";

/**
 * How deep a body's arrays and objects may nest. Far past any real request (a tool's JSON Schema nests a few levels),
 * and far short of where the run's own walks of the request (copies, redaction, the provider's body) overflow the
 * stack: a body nested thousands deep failed its run with a 500 instead of being refused.
 */
const MAX_DEPTH = 100;

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
 * rest), within `timeoutMs` (408), valid JSON (400) nested at most `MAX_DEPTH` deep (400).
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
    // The client's connection failed mid-body (it went away: "aborted"): the client's doing, not a failure of the
    // server to log as one (nobody reads the answer).
    const onError = (error: Error): void => {
      cleanup();
      reject(new HttpError(400, `the connection ended before the body's end (${error.message})`, { code: "request_aborted", headers: { Connection: "close" } }));
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      request.off("data", onData).off("end", onEnd).off("error", onError);
    };
    request.on("data", onData).once("end", onEnd).once("error", onError);
  });
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw badRequest(`the body is not valid JSON: ${(error as Error).message}`, null, "invalid_json");
  }
  if (nestedDeeperThan(value, MAX_DEPTH)) throw badRequest(`the body's arrays and objects nest more than ${MAX_DEPTH} deep`, null, "invalid_json");
  return value;
}

/** Whether `value` nests arrays and objects more than `max` deep (walked without recursion: the point is the stack). */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<{ node: object; depth: number }> = typeof value === "object" && value !== null ? [{ node: value, depth: 1 }] : [];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (depth > max) return true;
    for (const child of Object.values(node)) if (typeof child === "object" && child !== null) stack.push({ node: child as object, depth: depth + 1 });
  }
  return false;
}

function tooLarge(size: number, max: number): HttpError {
  // The rest of the body is not read: the connection closes once the answer is sent.
  return new HttpError(413, `the body (${size} bytes or more) is over the limit of ${max} bytes`, { code: "request_too_large", headers: { Connection: "close" } });
}
