import type { IncomingMessage, ServerResponse } from "node:http";
import { allowedHostNames, hasBearerToken, refusedHost } from "../mcp/serve/httpGuard.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";
import { redactSecrets } from "../util/redact.js";
import { HttpError } from "./HttpError.js";
import { newWireId } from "./newWireId.js";
import { readJsonBody } from "./readJsonBody.js";
import { RouteTable, type Protocol, type RouteRequest } from "./Route.js";
import type { ServeContext } from "./ServeContext.js";
import { sendError, sendJson } from "./sendJson.js";

/** The request headers a preflight allows when the browser names none. */
const CORS_HEADERS = "Authorization, Content-Type, A2A-Version, A2A-Extensions, X-Conversation-Id, X-Lllm-Max-Cost, X-Lllm-Max-Tokens, X-Lllm-Max-Duration, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID";

/** What the handler needs besides the routes' shared context. */
export interface ServeHandlerOptions {
  context: ServeContext;
  /** The protocols whose routes are served (see `PROTOCOLS` in serve.ts). */
  protocols: Protocol[];
  /** The bearer token every route but `/healthz` wants; none: no token is asked (`--no-auth`). */
  token?: string;
  /** The address listened on, for the Host and Origin checks (a wildcard turns them off: the token guards). */
  host: string;
  /** The one origin browsers may call from (CORS); none: no CORS headers, and an Origin must be the server's. */
  corsOrigin?: string;
  /** The largest body, in bytes. */
  maxBodyBytes: number;
  /** How long a body may take to arrive, in milliseconds. */
  bodyTimeoutMs: number;
  /** The MCP endpoint's handler (`/mcp`), when packages are served. */
  mcp?: (request: IncomingMessage, response: ServerResponse) => Promise<void>;
  /** Where a failed request is reported (never to the client: it gets a 500 without details). */
  log: (text: string) => void;
}

/**
 * The one request handler of `lllm serve`: DNS-rebinding checks (Host, Origin), CORS when asked, the bearer token
 * (every route but `/healthz` and the public ones: A2A's agent card), `/healthz`, `/metrics`, `/mcp`, then the protocols' routes; every error in
 * OpenAI's shape, every request counted in the metrics. A failing request never stops the server.
 */
export function createServeHandler(options: ServeHandlerOptions): (request: IncomingMessage, response: ServerResponse) => void {
  const { context } = options;
  const table = new RouteTable();
  for (const protocol of options.protocols) table.add(protocol(context));
  const allowed = allowedHostNames(options.host);

  const handle = async (request: IncomingMessage, response: ServerResponse, labels: { route: string; model: string }): Promise<void> => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const origin = request.headers.origin;
    const corsAllowed = options.corsOrigin !== undefined && origin === options.corsOrigin;
    // The CORS origin is the one foreign Origin let through; the Host is checked all the same.
    const refused = refusedHost(corsAllowed ? { ...request.headers, origin: undefined } : request.headers, allowed);
    if (refused) throw new HttpError(403, refused, { code: "forbidden_host" });
    if (corsAllowed) {
      response.setHeader("Access-Control-Allow-Origin", options.corsOrigin!);
      response.setHeader("Vary", "Origin");
      if (request.method === "OPTIONS") {
        labels.route = "preflight";
        // The headers the browser asks for, for this one allowed origin: SDKs send their own (the openai SDK's
        // X-Stainless-*), and a fixed list refused those, failing every call.
        const asked = request.headers["access-control-request-headers"];
        response.writeHead(204, { "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS", "Access-Control-Allow-Headers": typeof asked === "string" && asked.trim() !== "" ? asked : CORS_HEADERS, "Access-Control-Max-Age": "600" }).end();
        return;
      }
    }
    if (url.pathname === "/healthz") {
      labels.route = "/healthz";
      return sendJson(response, context.draining ? 503 : 200, { status: context.draining ? "stopping" : "ok" });
    }
    const found = table.find(request.method ?? "GET", url.pathname);
    const isPublic = "route" in found && found.route.public === true;
    if (options.token !== undefined && !isPublic && !hasBearerToken(request.headers, options.token)) {
      throw new HttpError(401, "Unauthorized: send the server's token as `Authorization: Bearer <token>`", { code: "invalid_api_key", headers: { "WWW-Authenticate": 'Bearer realm="lllm"' } });
    }
    if (url.pathname === "/metrics" && request.method === "GET") {
      labels.route = "/metrics";
      // The pool's depth and workers, asked of Redis now (a Redis away leaves them out, not the rest).
      const queue = context.queue ? await context.queue.gauges().catch(() => undefined) : undefined;
      const text = context.metrics.text(queue);
      response.writeHead(200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Content-Length": String(Buffer.byteLength(text)) }).end(text);
      return;
    }
    if (url.pathname === "/mcp") {
      labels.route = "/mcp";
      if (!options.mcp) throw new HttpError(404, "no MCP endpoint: serve a package folder (not only tactic files) to have its tools at /mcp", { code: "not_found" });
      return options.mcp(request, response);
    }
    if (!("route" in found)) {
      if (found.allowed.length > 0) throw new HttpError(405, `${request.method} is not allowed on ${url.pathname}; use ${found.allowed.join(" or ")}`, { code: "method_not_allowed", headers: { Allow: found.allowed.join(", ") } });
      throw new HttpError(404, `no route ${request.method} ${url.pathname}; this server answers /v1/models, /v1/chat/completions, /v1/responses, /a2a (its card at /.well-known/agent-card.json), /mcp, /healthz and /metrics`, { code: "not_found" });
    }
    labels.route = found.route.path;
    const closed = new AbortController();
    // A response closed before it was complete is a client that went away: its run is cancelled.
    response.once("close", () => {
      if (!response.writableFinished) closed.abort();
    });
    let body: Promise<unknown> | undefined;
    const routeRequest: RouteRequest = {
      request,
      response,
      params: found.params,
      body: () => (body ??= readJsonBody(request, { maxBytes: options.maxBodyBytes, timeoutMs: options.bodyTimeoutMs })),
      closed: closed.signal,
      client: { ...(request.socket.remoteAddress !== undefined ? { address: request.socket.remoteAddress } : {}), ...(typeof request.headers["user-agent"] === "string" ? { userAgent: request.headers["user-agent"] } : {}) },
      setModel: (id) => void (labels.model = id),
    };
    await found.route.handle(routeRequest, context);
  };

  return (request, response) => {
    const started = performance.now();
    const labels = { route: "other", model: "" };
    // A client that went away before the answer's end is counted as such (499, as proxies say), not as its status.
    response.once("close", () => context.metrics.request({ ...labels, status: response.writableFinished ? response.statusCode : 499 }, (performance.now() - started) / 1000));
    handle(request, response, labels).catch((error: unknown) => {
      if (error instanceof HttpError) {
        // A body refused before it was read whole: the rest is not read, so the connection cannot carry another request.
        if (error.headers.Connection === "close") response.once("finish", () => request.destroy());
        return sendError(response, error);
      }
      // The message names the server's own things (its files): the client gets an id to quote, the log the rest.
      const requestId = newWireId("req_");
      options.log(`lllm: request ${requestId} failed: ${escapeControlCharacters(redactSecrets(error instanceof Error ? error.message : String(error)), { all: true })}; still serving`);
      sendError(response, new HttpError(500, `internal error; the server's log has the details (request ${requestId})`, { code: "internal_error" }));
    });
  };
}
