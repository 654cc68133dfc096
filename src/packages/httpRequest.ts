import { PackageFetchError } from "../errors.js";
import { formatBytes } from "./limits.js";

export interface HttpRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** The most bytes of body read; a longer answer is an error. */
  maxBytes: number;
  /** What is asked for, for messages (`the npm registry`, `the OCI registry 127.0.0.1:5000`). */
  what: string;
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
/** Headers that carry credentials: never sent past a redirect to another origin. */
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];

/** Answers that say "not now" rather than "no": a GET is asked again after them, as npm does. */
const TRANSIENT_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
/** How long to wait before the second and the third try; a server's Retry-After is taken up to the last. */
const RETRY_DELAYS_MS = [500, 2_000];
const MAX_RETRY_AFTER_MS = 10_000;

/**
 * One HTTP request to a registry. Redirects are followed by hand: to another origin (scheme, host or port), the
 * credentials stay behind, so a registry's token never reaches a server it did not name (a blob store, or a
 * redirect planted by someone else). A GET or HEAD whose connection was cut, or that was answered 408, 429 or
 * 5xx, is tried again twice (a registry restarting, a proxy dropping an idle connection); a refused connection or
 * an unknown host is not (nothing is there, and waiting would only delay saying so). A registry that cannot be
 * reached is a PackageFetchError that says so; no message carries a header.
 */
export async function httpRequest(url: string, options: HttpRequestOptions): Promise<HttpAnswer> {
  const idempotent = (options.method ?? "GET") === "GET" || options.method === "HEAD";
  for (let attempt = 0; ; attempt += 1) {
    const last = !idempotent || attempt >= RETRY_DELAYS_MS.length;
    let answer: HttpAnswer;
    try {
      answer = await requestOnce(url, options);
    } catch (error) {
      if (last || !(error instanceof ConnectionCut)) throw error instanceof ConnectionCut ? error.failure(attempt + 1) : error;
      await delay(RETRY_DELAYS_MS[attempt]!);
      continue;
    }
    if (last || !TRANSIENT_STATUSES.has(answer.status)) return answer;
    await delay(retryAfter(answer.headers) ?? RETRY_DELAYS_MS[attempt]!);
  }
}

/** The wait a Retry-After header asks for (seconds or a date), capped; undefined when it asks for none it can keep. */
function retryAfter(headers: Headers): number | undefined {
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : undefined;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A connection that was cut (reset, closed mid-answer, timed out): worth another try, unlike a refused one. */
class ConnectionCut extends Error {
  constructor(
    private readonly describe: (tries: number) => string,
    override readonly cause: unknown,
  ) {
    super(describe(1));
  }

  failure(tries: number): PackageFetchError {
    return new PackageFetchError("package_fetch_failed", this.describe(tries), {
      hint: "Check the address and that the registry is up. Packages already installed keep working: runs use the cache and never reach the network.",
      cause: this.cause,
    });
  }
}

/** Error codes of a connection that was made and then lost. */
const CUT_CODES = new Set(["ECONNRESET", "EPIPE", "ETIMEDOUT", "UND_ERR_SOCKET", "UND_ERR_CLOSED", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

/** The error code (or message) under a failed fetch, for messages. */
function failureCode(error: unknown): string | undefined {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return (cause as NodeJS.ErrnoException | undefined)?.code ?? (cause instanceof Error ? cause.message : undefined);
}

function triesNote(tries: number): string {
  return tries > 1 ? `, ${tries} tries` : "";
}

async function requestOnce(url: string, options: HttpRequestOptions): Promise<HttpAnswer> {
  let current = new URL(url);
  const origin = current.origin;
  const headers = new Headers(options.headers ?? {});
  let method = options.method ?? "GET";
  let body = options.body;
  for (let hop = 0; ; hop += 1) {
    let response: Response;
    try {
      response = await fetch(current, { method, headers, redirect: "manual", ...(body !== undefined ? { body } : {}) });
    } catch (error) {
      const code = failureCode(error);
      const at = current.origin;
      const describe = (tries: number): string => `cannot reach ${options.what} at ${at}${code ? ` (${code}${triesNote(tries)})` : ""}`;
      const cut = new ConnectionCut(describe, error);
      if (code !== undefined && CUT_CODES.has(code)) throw cut;
      throw cut.failure(1);
    }
    const location = response.headers.get("location");
    if (!REDIRECTS.has(response.status) || location === null) {
      let answerBody: Buffer;
      try {
        answerBody = method === "HEAD" ? Buffer.alloc(0) : await readBody(response, options);
      } catch (error) {
        if (error instanceof PackageFetchError) throw error;
        // The body stream fails with undici's "terminated" when the connection is lost mid-answer.
        const code = failureCode(error);
        const at = current.origin;
        throw new ConnectionCut((tries) => `${options.what} at ${at} cut the connection before its answer was complete (${code ?? "terminated"}${triesNote(tries)})`, error);
      }
      return { status: response.status, headers: response.headers, body: answerBody, url: current.toString() };
    }
    await response.body?.cancel().catch(() => undefined);
    if (hop >= MAX_REDIRECTS) throw new PackageFetchError("package_fetch_failed", `${options.what} redirected more than ${MAX_REDIRECTS} times (last to ${new URL(location, current).origin})`);
    const next = new URL(location, current);
    if (next.protocol !== "https:" && next.protocol !== "http:") throw new PackageFetchError("package_fetch_failed", `${options.what} redirected to a ${next.protocol} address, which is not followed`);
    if (next.origin !== origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method !== "GET" && method !== "HEAD")) {
      method = "GET";
      body = undefined;
    }
    current = next;
  }
}

async function readBody(response: Response, options: HttpRequestOptions): Promise<Buffer> {
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  const tooLarge = (): PackageFetchError =>
    new PackageFetchError("package_fetch_failed", `${options.what} sent more than ${formatBytes(options.maxBytes)}: not read further`, { hint: "A package archive this large is refused; keep large data out of packages." });
  if (Number.isFinite(declared) && declared > options.maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (response.body === null) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > options.maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}
