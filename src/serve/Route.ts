import type { IncomingMessage, ServerResponse } from "node:http";
import { badRequest } from "./HttpError.js";
import type { ServeContext } from "./ServeContext.js";

/** One request as a route sees it. */
export interface RouteRequest {
  request: IncomingMessage;
  response: ServerResponse;
  /** The `{name}` segments of the route's path, decoded. */
  params: Record<string, string>;
  /** The JSON body, read once within the server's limits (a 4xx `HttpError` when it is not acceptable). */
  body(): Promise<unknown>;
  /** Aborted when the client goes away (a closed stream or socket) before its answer is complete. */
  closed: AbortSignal;
  /** Who asked: the address and user agent, kept in the run's record. */
  client: { address?: string; userAgent?: string };
  /** Names the model of the request, for the metrics (`model` label). */
  setModel(id: string): void;
}

/**
 * A route of a protocol: a method and a path (`/v1/models/{id}`), and a handler that translates between the wire
 * and runs. Auth, Host checks, CORS, metrics and errors are the server's; a handler throws an `HttpError` for a
 * 4xx or 5xx answer.
 */
export interface Route {
  method: "GET" | "POST" | "DELETE";
  path: string;
  /** Served without the token (A2A's agent card: what a client reads to learn how to authenticate). */
  public?: boolean;
  handle(request: RouteRequest, context: ServeContext): Promise<void>;
}

/** A protocol: its routes. Adding one to the server is adding it to `PROTOCOLS` (see createServeHandler). */
export type Protocol = (context: ServeContext) => Route[];

/** A compiled route table: the route and its parameters for a method and a path, or why none matches. */
export class RouteTable {
  readonly #routes: Array<{ route: Route; pattern: RegExp; names: string[] }> = [];

  add(routes: Route[]): void {
    for (const route of routes) {
      const names: string[] = [];
      const source = route.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)\}/g, (_match, name: string) => {
        names.push(name);
        return "([^/]+)";
      });
      this.#routes.push({ route, pattern: new RegExp(`^${source}$`), names });
    }
  }

  /** The route for `method` and `path`; `allowed` lists the methods of the path when only the method is wrong. */
  find(method: string, path: string): { route: Route; params: Record<string, string> } | { allowed: string[] } {
    const allowed: string[] = [];
    for (const { route, pattern, names } of this.#routes) {
      const match = pattern.exec(path);
      if (!match) continue;
      if (route.method !== method) {
        allowed.push(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      names.forEach((name, index) => {
        params[name] = decodePathSegment(match[index + 1]!, path);
      });
      return { route, params };
    }
    return { allowed };
  }
}

/** A `{name}` segment decoded; a malformed escape (`%E0%A4%A`) is the client's error, not a failure of the server. */
function decodePathSegment(segment: string, path: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`the path ${path} is not valid percent-encoding (a \`%\` must start an escape of UTF-8, e.g. %20)`, null, "invalid_path");
  }
}
