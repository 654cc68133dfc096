import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { damaged, isDamage, openDatabaseSync } from "../openDatabase.js";
import { RUN_STATUSES, type RunStatus } from "../RunRecord.js";
import { AmbiguousRunIdError, type RunStore } from "../RunStore.js";
import { secrets } from "../../util/redact.js";
import { mapStrings } from "../../util/mapStrings.js";
import { VIEWER_PAGE, VIEWER_PAGE_POLICY } from "./viewerPage.js";
import { ViewerGate } from "./ViewerGate.js";
import { ViewerQueries, type ViewerPageRequest } from "./viewerQueries.js";

export interface ViewerOptions {
  store: RunStore;
  /** 0 picks a free port. */
  port: number;
}

export interface ServedViewer {
  server: Server;
  /** The address to open, with the token: the one place the token is shown. */
  url: string;
}

/** The most runs one page of the list holds. */
const MAX_PAGE = 200;

const COMMON_HEADERS = {
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
  // The page's address carries the token on the first visit: it is never sent on to another page.
  "referrer-policy": "no-referrer",
};

/**
 * Serve the run viewer on 127.0.0.1 (never another interface), read-only, to whoever has its token (see
 * `ViewerGate`): the page (at `/` and at `/runs/<id>`, each run's own link), `GET /api/runs` (a page of the list:
 * filters and key paging as query parameters), `GET /api/runs/<id>` (a whole run) and `GET /api/facets` (the
 * tactics and batches to filter by). No CORS header is ever sent, so no other origin can read an answer.
 */
export async function serveViewer(options: ViewerOptions): Promise<ServedViewer> {
  const queries = new ViewerQueries(openDatabaseSync(options.store.file).database);
  // Made once the port is known (its Host check names the port); no request is read before that.
  let gate: ViewerGate | undefined;
  const server = createServer((request, response) => {
    try {
      if (!gate) sendJson(response, 503, { error: "the viewer is starting" });
      else handle({ store: options.store, queries, gate, request, response });
    } catch (error) {
      // A damaged log says so, and how to recover (the same words as `lllm logs`).
      const shown = isDamage(error) ? damaged(options.store.file, error) : error;
      sendJson(response, 500, { error: shown instanceof Error ? shown.message : String(shown) });
    }
  });
  server.on("close", () => queries.close());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port, "127.0.0.1", resolve);
    });
  } catch (error) {
    queries.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  gate = new ViewerGate(port);
  return { server, url: `http://127.0.0.1:${port}/?token=${gate.token}` };
}

interface Exchange {
  store: RunStore;
  queries: ViewerQueries;
  gate: ViewerGate;
  request: IncomingMessage;
  response: ServerResponse;
}

function handle({ store, queries, gate, request, response }: Exchange): void {
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  const decision = gate.check(request, url);
  if (!decision.allowed) {
    sendJson(response, decision.status, { error: decision.message });
    return;
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    sendJson(response, 405, { error: "the viewer is read-only" });
    return;
  }
  if (url.pathname === "/" || /^\/runs\/[^/]+$/.test(url.pathname)) {
    response.writeHead(200, { ...COMMON_HEADERS, "content-type": "text/html; charset=utf-8", "content-security-policy": VIEWER_PAGE_POLICY, ...(decision.setCookie ? { "set-cookie": decision.setCookie } : {}) }).end(VIEWER_PAGE);
    return;
  }
  if (url.pathname === "/favicon.ico") {
    response.writeHead(204, COMMON_HEADERS).end();
    return;
  }
  if (url.pathname === "/api/runs") {
    const page = pageRequest(url.searchParams);
    if (typeof page === "string") {
      sendJson(response, 400, { error: page });
      return;
    }
    store.refresh();
    sendJson(response, 200, queries.page(page));
    return;
  }
  if (url.pathname === "/api/facets") {
    sendJson(response, 200, queries.facets());
    return;
  }
  const match = /^\/api\/runs\/([^/]+)$/.exec(url.pathname);
  if (match) {
    // A malformed escape (`%E0`) is no run id: a 404 like any unknown id, not a 500 ("URI malformed").
    const id = decodedOrUndefined(match[1]!);
    if (id === undefined) {
      sendJson(response, 404, { error: `no run ${match[1]} in the log` });
      return;
    }
    try {
      const run = store.getRun(id);
      if (run) sendJson(response, 200, run);
      else sendJson(response, 404, { error: `no run ${id} in the log` });
    } catch (error) {
      if (!(error instanceof AmbiguousRunIdError)) throw error;
      sendJson(response, 404, { error: error.message });
    }
    return;
  }
  sendJson(response, 404, { error: "not found" });
}

function decodedOrUndefined(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The list's query parameters as a page request, or what is wrong with them. */
export function pageRequest(query: URLSearchParams): ViewerPageRequest | string {
  const text = (name: string): string | undefined => {
    const value = query.get(name)?.trim();
    return value ? value : undefined;
  };
  const limit = Number(query.get("n") ?? "50");
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) return `n must be a whole number from 1 to ${MAX_PAGE}`;
  const request: ViewerPageRequest = { limit };
  const status = text("status");
  if (status !== undefined) {
    if (!RUN_STATUSES.includes(status as RunStatus)) return `status must be one of ${RUN_STATUSES.join(", ")}`;
    request.status = status as RunStatus;
  }
  for (const name of ["since", "until"] as const) {
    const value = text(name);
    if (value === undefined) continue;
    if (!/^\d+$/.test(value)) return `${name} must be a time in milliseconds since the epoch`;
    request[name] = Number(value);
  }
  const tactic = text("tactic");
  if (tactic !== undefined) request.tactic = tactic;
  const batch = text("batch");
  if (batch !== undefined) request.batch = batch;
  const test = text("test");
  if (test !== undefined) {
    if (test !== "any" && test !== "passed" && test !== "failed") return "test must be any, passed or failed";
    request.test = test;
  }
  const search = text("q");
  if (search !== undefined) request.search = search;
  const before = text("before");
  if (before !== undefined) request.before = before;
  if (query.has("after")) request.after = query.get("after")!.trim();
  return request;
}

/**
 * Every answer passes the one redaction, as `lllm logs show` does: a run is redacted of the keys it knew when it
 * was recorded, but a key set in the environment only since (the run printed it before lllm knew it was one) would
 * otherwise reach the page as it is.
 */
function sendJson(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { ...COMMON_HEADERS, "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(mapStrings(value, (text) => secrets.redact(text))));
}
