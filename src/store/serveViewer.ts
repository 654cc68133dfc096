import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseAge } from "./parseAge.js";
import { RUN_STATUSES, type RunStatus } from "./RunRecord.js";
import type { RunFilter, RunStore } from "./RunStore.js";
import { VIEWER_PAGE } from "./viewerPage.js";

export interface ViewerOptions {
  store: RunStore;
  /** 0 picks a free port. */
  port: number;
}

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  // Only the page's own inline script and style, and requests to this server: no outside assets, no framing.
  "content-security-policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
};

/**
 * Serve the run viewer on 127.0.0.1 (never another interface): the page, `GET /api/runs` (the filters of
 * `lllm logs` as query parameters) and `GET /api/runs/<id>`. Read-only: every other method is refused. Requests
 * whose Host is not this loopback address are refused too, so a web page cannot reach it by DNS rebinding.
 */
export async function serveViewer(options: ViewerOptions): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    try {
      handle(options.store, request, response, server);
    } catch (error) {
      sendJson(response, 500, { error: error instanceof Error ? error.message : String(error) });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/` };
}

function handle(store: RunStore, request: IncomingMessage, response: ServerResponse, server: Server): void {
  const { port } = server.address() as AddressInfo;
  if (request.headers.host !== `127.0.0.1:${port}` && request.headers.host !== `localhost:${port}`) {
    sendJson(response, 403, { error: "this viewer answers only on 127.0.0.1" });
    return;
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    sendJson(response, 405, { error: "the viewer is read-only" });
    return;
  }
  const url = new URL(request.url ?? "/", `http://127.0.0.1:${port}`);
  if (url.pathname === "/") {
    response.writeHead(200, PAGE_HEADERS).end(VIEWER_PAGE);
    return;
  }
  if (url.pathname === "/api/runs") {
    sendJson(response, 200, store.listRuns(filterFrom(url.searchParams)));
    return;
  }
  const match = /^\/api\/runs\/([^/]+)$/.exec(url.pathname);
  if (match) {
    const run = store.getRun(decodeURIComponent(match[1]!));
    if (run) sendJson(response, 200, run);
    else sendJson(response, 404, { error: `no run ${match[1]}` });
    return;
  }
  sendJson(response, 404, { error: "not found" });
}

function filterFrom(query: URLSearchParams): RunFilter {
  const filter: RunFilter = {};
  const limit = Number(query.get("n") ?? "50");
  filter.limit = Number.isInteger(limit) && limit > 0 ? Math.min(limit, 1000) : 50;
  const tactic = query.get("tactic");
  if (tactic) filter.tactic = tactic;
  const status = query.get("status");
  if (status && RUN_STATUSES.includes(status as RunStatus)) filter.status = status as RunStatus;
  const search = query.get("search");
  if (search) filter.search = search;
  const age = parseAge(query.get("since") ?? "");
  if (age !== undefined) filter.since = Date.now() - age;
  return filter;
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" }).end(JSON.stringify(value));
}
