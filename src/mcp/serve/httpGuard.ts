import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/** The names a loopback server answers to. */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/** Whether `host` (as given to `--http`) listens on every interface. */
export function isWildcardHost(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "[::]";
}

/** Whether `host` is this machine only. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_NAMES.includes(host) || host === "::1" || /^127\./.test(host);
}

/**
 * The host names requests may name in `Host` and `Origin` (DNS-rebinding protection, as the MCP SDK's
 * `hostHeaderValidation` does it: by host name, any port): the loopback names, and the host served on when it is
 * another. `undefined` for a server on every interface, whose callers cannot be known (a token guards it).
 */
export function allowedHostNames(host: string): string[] | undefined {
  if (isWildcardHost(host)) return undefined;
  const named = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return [...new Set([...LOOPBACK_NAMES, named.toLowerCase()])];
}

/** Why a request is refused (403) for its `Host` or `Origin`, or undefined when both are allowed. */
export function refusedHost(headers: IncomingHttpHeaders, allowed: string[] | undefined): string | undefined {
  if (!allowed) return undefined;
  const host = headers.host;
  if (!host) return "Missing Host header";
  const hostName = hostNameOf(`http://${host}`);
  if (hostName === undefined || !allowed.includes(hostName)) return `Invalid Host: ${host}`;
  const origin = headers.origin;
  if (origin !== undefined) {
    const originName = hostNameOf(origin);
    if (originName === undefined || !allowed.includes(originName)) return `Invalid Origin: ${origin}`;
  }
  return undefined;
}

/** The host names of the Host and Origin values seen lately: a client sends the same ones with every request. */
const hostNames = new Map<string, string | undefined>();

function hostNameOf(url: string): string | undefined {
  if (hostNames.has(url)) return hostNames.get(url);
  let name: string | undefined;
  try {
    name = new URL(url).hostname.toLowerCase();
  } catch {
    name = undefined;
  }
  if (hostNames.size >= 64) hostNames.clear();
  hostNames.set(url, name);
  return name;
}

/** Whether the `Authorization` header carries the bearer token (compared in constant time). */
export function hasBearerToken(headers: IncomingHttpHeaders, token: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? "");
  if (!match) return false;
  // Digests have one length, so the comparison takes the same time whatever was sent.
  return timingSafeEqual(digest(match[1]!.trim()), tokenDigest(token));
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** The server's token's digest, made once (a server has one token; every request compares against it). */
let lastToken: { token: string; digest: Buffer } | undefined;
function tokenDigest(token: string): Buffer {
  if (lastToken?.token !== token) lastToken = { token, digest: digest(token) };
  return lastToken.digest;
}
