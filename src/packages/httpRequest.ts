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

/**
 * One HTTP request to a registry. Redirects are followed by hand: to another origin (scheme, host or port), the
 * credentials stay behind, so a registry's token never reaches a server it did not name (a blob store, or a
 * redirect planted by someone else). A registry that cannot be reached is a PackageFetchError that says so; no
 * message carries a header.
 */
export async function httpRequest(url: string, options: HttpRequestOptions): Promise<HttpAnswer> {
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
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
      const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? (cause instanceof Error ? cause.message : undefined);
      throw new PackageFetchError("package_fetch_failed", `cannot reach ${options.what} at ${current.origin}${code ? ` (${code})` : ""}`, {
        hint: "Check the address and that the registry is up. Packages already installed keep working: runs use the cache and never reach the network.",
        cause: error,
      });
    }
    const location = response.headers.get("location");
    if (!REDIRECTS.has(response.status) || location === null) {
      const answerBody = method === "HEAD" ? Buffer.alloc(0) : await readBody(response, options);
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
