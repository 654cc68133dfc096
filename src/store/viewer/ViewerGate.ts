import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** What the gate decided about a request. */
export type GateDecision =
  | { allowed: true; /** A `Set-Cookie` value to send: the request carried the token in its URL. */ setCookie?: string }
  | { allowed: false; status: 401 | 403; message: string };

/**
 * Who may read the viewer: any local user can connect to 127.0.0.1, so each `lllm logs serve` makes a random token
 * that only its printed URL carries. A request is let in with that token (`?token=`, which also sets a cookie) or
 * with the cookie (HttpOnly, SameSite=Strict, Path=/: the page's own requests, and no other site's), and only
 * when its Host is the address the viewer is bound to (a web page that rebinds its name to 127.0.0.1 sends its
 * own name). The token is never logged; it is compared in constant time.
 */
export class ViewerGate {
  /** 256 random bits, URL-safe. */
  readonly token = randomBytes(32).toString("base64url");
  readonly #digest = digest(this.token);
  readonly #hosts: string[];
  /** One cookie per port: browsers share cookies across the ports of a host, and two viewers may run at once. */
  readonly #cookie: string;

  constructor(port: number) {
    this.#hosts = [`127.0.0.1:${port}`, `localhost:${port}`];
    this.#cookie = `lllm_viewer_${port}`;
  }

  check(request: IncomingMessage, url: URL): GateDecision {
    if (!this.#hosts.includes(request.headers.host ?? "")) {
      return { allowed: false, status: 403, message: `this viewer answers only at http://${this.#hosts[0]}/` };
    }
    const fromUrl = url.searchParams.get("token");
    if (fromUrl !== null && this.#matches(fromUrl)) return { allowed: true, setCookie: `${this.#cookie}=${this.token}; HttpOnly; SameSite=Strict; Path=/` };
    const fromCookie = cookieValue(request.headers.cookie, this.#cookie);
    if (fromCookie !== undefined && this.#matches(fromCookie)) return { allowed: true };
    return { allowed: false, status: 401, message: "this viewer needs its token: open the address `lllm logs serve` printed (it ends with ?token=…)" };
  }

  /** Equal-length digests, so the comparison takes the same time whatever the guess (and its length) is. */
  #matches(candidate: string): boolean {
    return timingSafeEqual(digest(candidate), this.#digest);
  }
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}
