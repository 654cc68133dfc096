import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ConfigError } from "../../errors.js";
import { sdkServer, sdkServerHttp } from "./sdkServer.js";
import { allowedHostNames, hasBearerToken, refusedHost } from "./httpGuard.js";
import { MemoryEventStore } from "./MemoryEventStore.js";
import { MAX_CLIENT_MESSAGE_BYTES } from "./messageLimit.js";

type StreamableHttpModule = typeof import("@modelcontextprotocol/sdk/server/streamableHttp.js");
type TypesModule = typeof import("@modelcontextprotocol/sdk/types.js");

/** The path of the MCP endpoint. */
export const MCP_HTTP_PATH = "/mcp";
/** What a client is told to wait before reconnecting a broken stream (SSE `retry`), in milliseconds. */
export const SSE_RETRY_MS = 1000;
/** How many sessions are kept open at once by default; a new one past it is refused (503). */
export const DEFAULT_MAX_SESSIONS = 100;
/** How long a session may go without a request or an open stream before it is closed, by default: 30 minutes. */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 30 * 60_000;

/** Options of `serveHttp`. */
export interface ServeHttpOptions {
  /** The address to listen on; `127.0.0.1` by default. A wildcard (`0.0.0.0`) turns the Host check off. */
  host?: string;
  /** 0 picks a free port (see the `url` of the result). */
  port: number;
  /** A new MCP server for each session. */
  newServer: () => Server;
  /** When set, every request must carry `Authorization: Bearer <token>` (401 otherwise). */
  token?: string;
  /**
   * The most sessions open at once (`DEFAULT_MAX_SESSIONS` by default): each holds an MCP server and its recent
   * events, so a client that opens sessions without end would otherwise exhaust memory. An `initialize` past it
   * is answered 503 with a JSON-RPC error.
   */
  maxSessions?: number;
  /**
   * Milliseconds a session may go without a request in flight or a stream open before it is closed
   * (`DEFAULT_SESSION_IDLE_TIMEOUT_MS` by default), so that clients that vanish without `DELETE` do not hold
   * places for ever. The client's next request gets 404, on which MCP clients start a new session.
   */
  sessionIdleTimeoutMs?: number;
  /** Where problems are reported (stderr by default). */
  log?: (text: string) => void;
  /** Stops serving: sessions close, then the listener. */
  signal?: AbortSignal;
}

/** A running HTTP service. */
export interface HttpService {
  /** The endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  /** Settles once serving has stopped (after the signal, or `close()`). */
  closed: Promise<void>;
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** Requests of this session whose response is still open (an SSE stream, a tool call running). */
  inFlight: number;
  /** Closes the session once it has been idle long enough; set while nothing is in flight. */
  idleTimer?: NodeJS.Timeout;
}

/**
 * Serve MCP over Streamable HTTP at `/mcp`: sessions (a new MCP server per `initialize`, ended by `DELETE` or by
 * stopping), SSE streams that a client can resume with `Last-Event-ID` (each session keeps its recent events),
 * DNS-rebinding protection (a `Host` or `Origin` that is not the served host is refused, 403, before anything
 * else), and an optional bearer token (401 without it). A malformed body is a JSON-RPC parse error (400), one over
 * 10 MB is refused (413), an unknown session is 404; none of them stops the service. At most `maxSessions` sessions
 * are open at once (a new one past it is refused, 503), and a session idle for `sessionIdleTimeoutMs` is closed.
 */
export function mcpHttpHandler(options: Omit<ServeHttpOptions, "port" | "signal">): McpHttpHandler {
  // The SDK (with its zod, some 200 files) is loaded by the first request that opens a session, not here: `lllm
  // serve` makes this handler at every start, for an endpoint most of its clients never call.
  const sdk = (): { StreamableHTTPServerTransport: StreamableHttpModule["StreamableHTTPServerTransport"]; isInitializeRequest: TypesModule["isInitializeRequest"] } => ({
    StreamableHTTPServerTransport: sdkServerHttp().StreamableHTTPServerTransport,
    isInitializeRequest: sdkServer().isInitializeRequest,
  });
  const host = options.host ?? "127.0.0.1";
  const allowed = allowedHostNames(host);
  const log = options.log ?? ((text: string) => void process.stderr.write(`${text}\n`));
  const sessions = new Map<string, Session>();
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  // setTimeout fires at once for a delay past 2^31-1 ms (24.8 days): a longer timeout is that long.
  const idleTimeoutMs = Math.min(options.sessionIdleTimeoutMs ?? DEFAULT_SESSION_IDLE_TIMEOUT_MS, 2 ** 31 - 1);
  // Sessions being opened count against the limit too: initializes that arrive together cannot pass it.
  let opening = 0;
  let refusing = false;

  const endSession = async (session: Session): Promise<void> => {
    clearTimeout(session.idleTimer);
    const id = session.transport.sessionId;
    if (id !== undefined && sessions.get(id) === session) sessions.delete(id);
    await session.transport.close();
    await session.server.close();
  };

  /** Counts the request as in flight until its response closes; the idle clock of the session starts at zero. */
  const track = (session: Session, response: ServerResponse): void => {
    session.inFlight++;
    clearTimeout(session.idleTimer);
    session.idleTimer = undefined;
    response.once("close", () => {
      session.inFlight--;
      const id = session.transport.sessionId;
      if (session.inFlight > 0 || id === undefined || sessions.get(id) !== session) return;
      session.idleTimer = setTimeout(() => {
        endSession(session).catch((error: unknown) => log(`lllm: closing idle session ${id} failed: ${error instanceof Error ? error.message : String(error)}`));
      }, idleTimeoutMs);
      session.idleTimer.unref();
    });
  };

  const openSession = async (): Promise<Session> => {
    const server = options.newServer();
    const transport: StreamableHTTPServerTransport = new (sdk().StreamableHTTPServerTransport)({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new MemoryEventStore(),
      retryInterval: SSE_RETRY_MS,
      // The transport reads no body itself (it is given the parsed one); the limit is enforced here, below.
      onsessioninitialized: (id) => void sessions.set(id, session),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    const session: Session = { transport, server, inFlight: 0 };
    const previous = server.onclose;
    server.onclose = () => {
      clearTimeout(session.idleTimer);
      if (transport.sessionId) sessions.delete(transport.sessionId);
      previous?.();
    };
    await server.connect(transport);
    return session;
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const refused = refusedHost(request.headers, allowed);
    if (refused) return reply(response, 403, refused);
    if (new URL(request.url ?? "/", "http://localhost").pathname !== MCP_HTTP_PATH) return reply(response, 404, `Not found: the MCP endpoint is ${MCP_HTTP_PATH}`);
    if (options.token !== undefined && !hasBearerToken(request.headers, options.token)) {
      response.setHeader("WWW-Authenticate", 'Bearer realm="lllm"');
      return reply(response, 401, "Unauthorized: send the token as `Authorization: Bearer <token>`");
    }
    const sessionId = request.headers["mcp-session-id"];
    const known = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (request.method === "POST") {
      const body = await readJsonBody(request);
      if (!body.ok) {
        if (body.status === 413) log(`lllm: ${body.message}; still serving`);
        return reply(response, body.status, body.message, body.code);
      }
      if (known) {
        track(known, response);
        return known.transport.handleRequest(request, response, body.value);
      }
      if (typeof sessionId === "string") return reply(response, 404, `Session not found: ${sessionId}; start a new one with initialize`, -32001);
      const { isInitializeRequest } = sdk();
      if (!(Array.isArray(body.value) ? body.value.some((message) => isInitializeRequest(message)) : isInitializeRequest(body.value))) {
        return reply(response, 400, "Bad Request: no session; send initialize first, then the Mcp-Session-Id it returns");
      }
      if (sessions.size + opening >= maxSessions) {
        if (!refusing) log(`lllm: ${sessionsOpen(maxSessions, "MCP session")}, the most kept (--max-sessions); new ones are refused (503) until one ends`);
        refusing = true;
        return reply(response, 503, `Service Unavailable: ${sessionsOpen(maxSessions, "session")}, the most this server keeps; retry later, or end a session (DELETE) first`);
      }
      opening++;
      try {
        const session = await openSession();
        track(session, response);
        await session.transport.handleRequest(request, response, body.value);
      } finally {
        opening--;
      }
      // A session could be opened, so the server was below its limit: the next refusal is news again.
      refusing = false;
      return;
    }
    if (request.method === "GET" || request.method === "DELETE") {
      if (typeof sessionId !== "string") return reply(response, 400, "Bad Request: the Mcp-Session-Id header is missing");
      if (!known) return reply(response, 404, `Session not found: ${sessionId}`, -32001);
      track(known, response);
      return known.transport.handleRequest(request, response);
    }
    response.setHeader("Allow", "GET, POST, DELETE");
    return reply(response, 405, `Method not allowed: ${request.method ?? "?"}`);
  };

  const closeSessions = async (): Promise<void> => {
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.allSettled(open.map(endSession));
  };
  return { handle, closeSessions };
}

/** The MCP endpoint as a request handler, to mount in another server (`lllm serve` mounts it at `/mcp`). */
export interface McpHttpHandler {
  handle(request: IncomingMessage, response: ServerResponse): Promise<void>;
  /** End every session. */
  closeSessions(): Promise<void>;
}

/** Serve `mcpHttpHandler` on its own server (`lllm mcp serve --http`), until the signal or `close()`. */
export async function serveHttp(options: ServeHttpOptions): Promise<HttpService> {
  const host = options.host ?? "127.0.0.1";
  const log = options.log ?? ((text: string) => void process.stderr.write(`${text}\n`));
  const { handle, closeSessions } = mcpHttpHandler(options);
  const http = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      log(`lllm: an HTTP request failed: ${error instanceof Error ? error.message : String(error)}; still serving`);
      if (!response.headersSent) reply(response, 500, "Internal error", -32603);
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException): void => {
      reject(new ConfigError("mcp_serve_listen_failed", `cannot listen on ${host}:${options.port}: ${error.code === "EADDRINUSE" ? "the port is in use" : error.message}`, { hint: "Pick another port (--http HOST:PORT), or 0 for any free one." }));
    };
    http.once("error", failed);
    http.listen(options.port, host.replace(/^\[|\]$/g, ""), () => {
      http.off("error", failed);
      resolve();
    });
  });
  http.on("error", (error) => log(`lllm: HTTP server error: ${error.message}`));

  let stopping: Promise<void> | undefined;
  let stopped!: () => void;
  const closed = new Promise<void>((resolve) => (stopped = resolve));
  const close = (): Promise<void> => {
    stopping ??= (async () => {
      options.signal?.removeEventListener("abort", onAbort);
      await closeSessions();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      stopped();
    })();
    return stopping;
  };
  const onAbort = (): void => void close();
  if (options.signal?.aborted) void close();
  else options.signal?.addEventListener("abort", onAbort, { once: true });

  const address = http.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return { url: `http://${shown}:${address.port}${MCP_HTTP_PATH}`, closed, close };
}

/** A JSON-RPC error as a whole HTTP answer (id null: it answers no request in particular). */
function reply(response: ServerResponse, status: number, message: string, code = -32000): void {
  response.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

type Body = { ok: true; value: unknown } | { ok: false; status: number; code: number; message: string };

/** The request's JSON body, at most `MAX_CLIENT_MESSAGE_BYTES` (a larger one is read to its end and dropped). */
function readJsonBody(request: IncomingMessage): Promise<Body> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_CLIENT_MESSAGE_BYTES) chunks.push(chunk);
      else chunks.length = 0;
    });
    request.once("error", reject);
    request.once("end", () => {
      if (size > MAX_CLIENT_MESSAGE_BYTES) {
        resolve({ ok: false, status: 413, code: -32600, message: `message of ${size} bytes is over the limit of ${MAX_CLIENT_MESSAGE_BYTES} bytes; it was dropped` });
        return;
      }
      try {
        resolve({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown });
      } catch (error) {
        resolve({ ok: false, status: 400, code: -32700, message: `Parse error: ${(error as Error).message}` });
      }
    });
  });
}

/** `1 session is open`, `2 sessions are open`. */
function sessionsOpen(count: number, noun: string): string {
  return count === 1 ? `1 ${noun} is open` : `${count} ${noun}s are open`;
}
