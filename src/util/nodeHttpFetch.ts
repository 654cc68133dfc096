import type diagnostics_channel from "node:diagnostics_channel";
import type http from "node:http";
import type https from "node:https";
import { pipeline, Readable } from "node:stream";
import type zlib from "node:zlib";
import { proxyAuthorization, proxyFor, proxyOrigin, type ProxyEnvironment } from "./proxyEnvironment.js";
import { FileBody } from "./FileBody.js";
import { ReplyTooLarge } from "./ReplyTooLarge.js";
import { REQUEST_SENT_CHANNEL } from "./requestSentChannel.js";
import { ProxyFailed } from "./ProxyFailed.js";
import type { TunnelAgent } from "./TunnelAgent.js";
import { requireNow } from "./lazyModule.js";
import { ResponseHeaders } from "./ResponseHeaders.js";
import { StreamResponse } from "./StreamResponse.js";
import { WholeResponse } from "./WholeResponse.js";

/**
 * Keep-alive connection pools, one per scheme for the process: every model client shares them, as every caller
 * of Node's `fetch` shares its global dispatcher. Most recently used sockets first (`lifo`), so that the idle ones
 * are those a server may close, not those about to be reused.
 */
let httpAgent: http.Agent | undefined;
let httpsAgent: https.Agent | undefined;
/** One pool of tunnelled connections per proxy (its URL, credentials included, is the key). */
const tunnels = new Map<string, TunnelAgent>();
/** The tunnel's module, imported before the first request through a proxy's tunnel (it brings tls). */
let tunnelModule: typeof import("./TunnelAgent.js") | undefined;

// http, https and zlib are `require`d when first needed: `lllm validate` loads none of them, a run against a local
// server over plain HTTP, answering uncompressed, neither TLS nor zlib (the TLS stack alone costs a one-round run's
// start-up several milliseconds).
const httpModule = (): typeof http => requireNow<typeof http>("node:http");
const httpsModule = (): typeof https => requireNow<typeof https>("node:https");
const zlibModule = (): typeof zlib => requireNow<typeof zlib>("node:zlib");

/** The default cap of a decoded answer body: far above any model reply, far below what fills memory. */
export const DEFAULT_MAX_REPLY_BYTES = 64 * 1024 * 1024;

/** How the model clients reach their servers. */
export interface HttpTransport {
  /** Bytes of a decoded answer body read at most; past them the body fails with `ReplyTooLarge`. Default 64 MB. */
  maxReplyBytes?: number;
  /** The proxies of the environment (`proxyEnvironment`); undefined: every connection is direct. */
  proxies?: ProxyEnvironment;
}

/** Told when a request has been written to the socket (its headers and body handed to the system). */
let requestSent: diagnostics_channel.Channel | undefined;

/** Statuses whose responses have no body (`new Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * `fetch` for the model clients, over `node:http` with keep-alive pools. Node's own `fetch` (undici) spends more
 * CPU per request than a batch item's whole bookkeeping: it clones the request and tees its body, and reads the
 * answer through several layers of web streams. This one sends the body as is and turns the answer into a
 * `Response` whose body streams straight from the socket: about a third less CPU per model call.
 *
 * `transport` adds what Node's `fetch` lacks: the environment's HTTP proxies (`proxyEnvironment`) and a cap on the
 * decoded size of the answer, past which its body fails with `ReplyTooLarge`.
 *
 * It never follows redirects (callers go through `fetchWithinOrigin`, which asks for `redirect: "manual"` and
 * follows them within the origin only). What it does not handle, it hands to `globalThis.fetch` unchanged (with
 * neither proxy nor cap; the model clients never send such requests): a `Request` object, a body other than text
 * or bytes (a stream, a form), a scheme other than http(s), another redirect mode. Failures look as they do with
 * `fetch`: a connection that fails rejects with `TypeError("fetch failed", {cause})`, an abort with the signal's
 * reason.
 */
export function nodeHttpFetch(input: string | URL | Request, init: RequestInit = {}, transport: HttpTransport = {}): Promise<Response> {
  const body = init.body as RequestInit["body"] | FileBody;
  const fileBody = body instanceof FileBody ? body : undefined;
  const plainBody = body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array || body instanceof ArrayBuffer || fileBody !== undefined;
  // Nothing here touches `Request`, `Headers` or `Response` on the way of a whole answer: each would load Node's
  // fetch (undici), the start-up cost this transport exists to spare (WholeResponse).
  const url = typeof input === "string" ? new URL(input) : input instanceof URL ? input : undefined;
  if (url === undefined || !plainBody || init.redirect !== "manual" || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return fileBody ? fileBody.toBlob().then((blob) => globalThis.fetch(input, { ...init, body: blob })) : globalThis.fetch(input, init);
  }
  const maxReplyBytes = transport.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
  const viaProxy = proxyFor(transport.proxies, url);
  if (viaProxy !== undefined && url.protocol === "https:" && tunnelModule === undefined) {
    return import("./TunnelAgent.js").then((loaded) => {
      tunnelModule = loaded;
      return nodeHttpFetch(url, init, transport);
    });
  }
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortReason(signal));

  const headers = requestHeaders(init.headers);
  // What `fetch` adds: answers may come compressed (and are decoded below); any type is accepted.
  headers["accept-encoding"] ??= "gzip, deflate";
  headers["accept"] ??= "*/*";
  const payload = body === undefined || body === null || body instanceof FileBody ? undefined : typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body instanceof ArrayBuffer ? new Uint8Array(body) : (body as Uint8Array));
  if (payload !== undefined) headers["content-length"] = String(payload.length);
  if (fileBody) {
    headers["content-length"] = String(fileBody.size);
    headers["content-type"] ??= fileBody.type;
  }
  const method = (init.method ?? "GET").toUpperCase();

  return new Promise<Response>((resolve, reject) => {
    let answer: http.IncomingMessage | undefined;
    let settled = false;
    const onAbort = (): void => {
      const reason = abortReason(signal!);
      // Before the answer: the promise rejects with the reason. During it: the body's stream fails with it.
      const error = reason instanceof Error ? reason : new DOMException("This operation was aborted", "AbortError");
      request.destroy(error);
      answer?.destroy(error);
      if (!settled) {
        settled = true;
        reject(reason);
      }
    };
    const done = (): void => signal?.removeEventListener("abort", onAbort);
    const request = send(url, method, headers, viaProxy, (response) => {
      answer = response;
      response.once("close", done);
      const status = response.statusCode ?? 0;
      if (status < 200 || status > 599) {
        response.destroy();
        settled = true;
        return reject(new TypeError("fetch failed", { cause: new Error(`the server answered with an invalid HTTP status (${status})`) }));
      }
      if (method === "HEAD" || NULL_BODY_STATUSES.has(status)) {
        // No body, as fetch has it (null): Node's own Response, the one kind of answer a model client never gets.
        response.resume();
        settled = true;
        const result = new Response(null, { status, statusText: response.statusMessage ?? "", headers: new ResponseHeaders(response.rawHeaders) });
        // A Response made here has no URL of its own; the SDK names it in its debug log.
        Object.defineProperty(result, "url", { value: url.href });
        return resolve(result);
      }
      const decoder = decoderFor(response.headers["content-encoding"]);
      const stream: Readable = decoder ? pipeline(response, decoder, () => undefined) : response;
      const streamed = (): void => {
        // Counted after decoding: a small gzip body may inflate to gigabytes.
        limitBytes(stream, maxReplyBytes);
        // Held until its reader comes (a "data" listener alone would let chunks flow past it): the reader's reads
        // pass each chunk to the count too.
        stream.pause();
        settled = true;
        // Not Node's Response over a web stream: the model clients read a stream of events chunk by chunk from
        // the socket (StreamResponse), without loading Node's fetch.
        resolve(new StreamResponse(stream, { status, statusText: response.statusMessage ?? "", headers: new ResponseHeaders(response.rawHeaders), url: url.href }));
      };
      const readAhead = Math.min(SMALL_BODY_BYTES, maxReplyBytes);
      if (!mayReadWhole(response, readAhead)) return streamed();
      // A model's whole reply (chunked, compressed or of a known small length): read here and handed over as bytes
      // (WholeResponse). Web streams over the socket cost a batch more CPU than the rest of the answer's reading,
      // and a `Response` of Node's own would load its fetch. An answer that goes past the read-ahead is a stream
      // after all, the bytes read so far first.
      const chunks: Buffer[] = [];
      let size = 0;
      const detach = (): void => {
        stream.off("data", onData);
        stream.off("end", onEnd);
        stream.off("error", onFail);
        stream.off("close", onClose);
      };
      const onData = (chunk: Buffer): void => {
        chunks.push(chunk);
        size += chunk.length;
        if (size <= readAhead) return;
        stream.pause();
        detach();
        stream.unshift(Buffer.concat(chunks));
        streamed();
      };
      const onEnd = (): void => {
        detach();
        if (settled) return;
        settled = true;
        const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        resolve(new WholeResponse(bytes, { status, statusText: response.statusMessage ?? "", headers: new ResponseHeaders(response.rawHeaders), url: url.href }));
      };
      const onFail = (error?: Error): void => {
        detach();
        if (settled) return;
        settled = true;
        reject(new TypeError("fetch failed", { cause: error ?? new Error("the connection closed before the whole answer came") }));
      };
      const onClose = (): void => onFail();
      stream.on("data", onData);
      stream.once("end", onEnd);
      stream.once("error", onFail);
      stream.once("close", onClose);
    });
    request.on("error", (error) => {
      done();
      if (settled) return;
      settled = true;
      reject(new TypeError("fetch failed", { cause: viaProxy !== undefined && url.protocol === "http:" ? new ProxyFailed(proxyOrigin(viaProxy), undefined, `cannot be reached: ${error.message}`, { cause: error }) : error }));
    });
    signal?.addEventListener("abort", onAbort, { once: true });
    requestSent ??= requireNow<typeof diagnostics_channel>("node:diagnostics_channel").channel(REQUEST_SENT_CHANNEL);
    const channel = requestSent;
    if (channel.hasSubscribers) request.once("finish", () => channel.publish({ url: url.href }));
    if (!fileBody) {
      request.end(payload);
      return;
    }
    // A failed write is the request's error too (its "error" event rejects, or the answer's stream fails).
    fileBody.writeTo(request).then(
      () => request.end(),
      (error: unknown) => request.destroy(error instanceof Error ? error : new Error(String(error))),
    );
  });
}

/**
 * The request's headers as node:http takes them, read as `new Headers(init)` would read them (names in lower case,
 * values trimmed, repeated names joined with ", ") but without it: `Headers` would load Node's fetch.
 */
function requestHeaders(init: RequestInit["headers"]): Record<string, string> {
  const headers: Record<string, string> = {};
  const add = (name: string, value: unknown): void => {
    const key = name.toLowerCase();
    const text = String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
    headers[key] = key in headers ? `${headers[key]}, ${text}` : text;
  };
  if (init === undefined || init === null) return headers;
  if (Array.isArray(init)) for (const [name, value] of init) add(String(name), value);
  else if (typeof (init as Headers).forEach === "function") (init as Headers).forEach((value, name) => add(name, value));
  else for (const [name, value] of Object.entries(init)) add(name, value);
  return headers;
}

/**
 * The request: straight to the server, or through the environment's proxy for it (a CONNECT tunnel for https,
 * an absolute-form request to the proxy for http, with the proxy's credentials on it and not the target's).
 */
function send(url: URL, method: string, headers: Record<string, string>, proxy: URL | undefined, onResponse: (response: http.IncomingMessage) => void): http.ClientRequest {
  if (url.protocol === "https:") {
    const agent = proxy === undefined ? (httpsAgent ??= new (httpsModule().Agent)({ keepAlive: true, scheduling: "lifo" })) : tunnelThrough(proxy);
    return httpsModule().request(url, { method, headers, agent }, onResponse);
  }
  const plain = httpModule();
  httpAgent ??= new plain.Agent({ keepAlive: true, scheduling: "lifo" });
  if (proxy === undefined) return plain.request(url, { method, headers, agent: httpAgent }, onResponse);
  const authorization = proxyAuthorization(proxy);
  const proxyHeaders = { ...headers, host: url.host, ...(authorization ? { "proxy-authorization": authorization } : {}) };
  return plain.request({ host: proxy.hostname.replace(/^\[|\]$/g, ""), port: Number(proxy.port || 80), path: url.href, method, headers: proxyHeaders, agent: httpAgent }, onResponse);
}

function tunnelThrough(proxy: URL): TunnelAgent {
  let agent = tunnels.get(proxy.href);
  if (agent === undefined) {
    agent = new tunnelModule!.TunnelAgent(proxy, { keepAlive: true, scheduling: "lifo" });
    tunnels.set(proxy.href, agent);
  }
  return agent;
}

/** Answers read whole before the `Response` resolves: at most this many bytes (decoded); a longer one streams. */
const SMALL_BODY_BYTES = 1024 * 1024;

/**
 * An answer whose body may be read whole before it is handed over: not a stream of events (whose parts the caller
 * reads as they come), and not declared longer than the read-ahead.
 */
function mayReadWhole(response: http.IncomingMessage, readAhead: number): boolean {
  if ((response.headers["content-type"] ?? "").toLowerCase().includes("text/event-stream")) return false;
  const length = Number(response.headers["content-length"] ?? Number.NaN);
  const encoding = response.headers["content-encoding"]?.trim().toLowerCase();
  const plain = encoding === undefined || encoding === "" || encoding === "identity";
  return !(plain && Number.isSafeInteger(length) && length > readAhead);
}

/**
 * Fails `stream` with `ReplyTooLarge` once more than `limit` bytes have come through it. A listener beside the
 * reader's (both get each chunk: a `read()` emits it to "data" listeners, and `Readable.toWeb` reads so) rather than
 * a Transform in a pipeline: that costs about half as much CPU again as the whole rest of a small answer's reading.
 */
function limitBytes(stream: Readable, limit: number): void {
  let seen = 0;
  const count = (chunk: Buffer): void => {
    seen += chunk.length;
    if (seen <= limit) return;
    stream.removeListener("data", count);
    stream.destroy(new ReplyTooLarge(limit));
  };
  stream.on("data", count);
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** The decoder of a compressed answer (the encodings asked for above), or none. */
function decoderFor(encoding: string | undefined): zlib.Gunzip | zlib.Inflate | undefined {
  const name = encoding?.trim().toLowerCase();
  if (name !== "gzip" && name !== "x-gzip" && name !== "deflate") return undefined;
  const codec = zlibModule();
  const options = { flush: codec.constants.Z_SYNC_FLUSH, finishFlush: codec.constants.Z_SYNC_FLUSH };
  return name === "deflate" ? codec.createInflate(options) : codec.createGunzip(options);
}
