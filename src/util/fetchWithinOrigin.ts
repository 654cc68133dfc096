/** Redirects followed within the origin before giving up. */
export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** A redirect that was not followed: to another origin, to an invalid address, or one too many. */
export class RedirectRefused extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** The origin the redirect pointed to, when it was another one. */
    readonly target?: string,
  ) {
    super(message);
    this.name = "RedirectRefused";
  }
}

/**
 * `fetch`, following redirects only within the request's own origin (scheme, host and port). A request that carries
 * a key (a header, the query) must never take it to another host through an open redirect, nor fetch another
 * site's page in its place (SSRF): a redirect elsewhere throws `RedirectRefused`, which names the target origin.
 * As browsers do, 303 (and 301/302 after a POST) continue as a GET without a body; 307/308 repeat the request.
 */
export async function fetchWithinOrigin(fetchImpl: typeof globalThis.fetch, input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  // A string or a URL is never a `Request`, and is not asked: reading `Request` (or `Headers`) loads Node's fetch,
  // which the model clients' transport spares a plain run (see WholeResponse).
  const request = typeof input === "string" || input instanceof URL ? undefined : input;
  let current = new URL(request ? request.url : input.toString());
  const origin = current.origin;
  let method = (init.method ?? request?.method ?? "GET").toUpperCase();
  let body = init.body;
  let headers = init.headers ?? request?.headers;
  for (let hop = 0; ; hop += 1) {
    const response = await fetchImpl(hop === 0 && request ? request : current, { ...init, method, ...(headers !== undefined ? { headers } : {}), ...(body !== undefined && body !== null ? { body } : { body: null }), redirect: "manual" });
    const location = response.headers.get("location");
    if (!REDIRECT_STATUSES.has(response.status) || location === null) return response;
    await response.body?.cancel().catch(() => undefined);
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw new RedirectRefused(`a redirect (HTTP ${response.status}) to an invalid address was not followed`, response.status);
    }
    if (next.origin !== origin) {
      throw new RedirectRefused(
        `a redirect (HTTP ${response.status}) to another host, ${next.origin}, was not followed: redirects are followed only within ${origin}, so keys are never sent elsewhere`,
        response.status,
        next.origin,
      );
    }
    if (hop >= MAX_REDIRECTS) throw new RedirectRefused(`more than ${MAX_REDIRECTS} redirects; stopped following`, response.status);
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
      method = "GET";
      body = undefined;
      const without = new Headers(headers);
      without.delete("content-type");
      without.delete("content-length");
      headers = without;
    }
    current = next;
  }
}
