import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism } from "node:os";
import { approveAll, approveNone } from "../approval/index.js";
import { ConfigError, InterruptedError } from "../errors.js";
import type { RunLimits } from "../limits/index.js";
import { storeFile } from "../store/startRunLog.js";
import { environmentSecrets } from "../util/redact.js";
import { prepareTactic, type PreparedTactic } from "../tactics/prepareTactic.js";
import { Admission } from "./Admission.js";
import { createServeHandler } from "./createServeHandler.js";
import { chatProtocol } from "./openai/chatRoutes.js";
import { modelProtocol } from "./openai/modelRoutes.js";
import { responsesProtocol } from "./responses/responsesRoutes.js";
import { a2aProtocol } from "./a2a/a2aRoutes.js";
import { PausedRuns } from "./PausedRuns.js";
import type { Protocol } from "./Route.js";
import type { ServeContext } from "./ServeContext.js";
import { ServedModels, type TacticToServe } from "./ServedModels.js";
import type { RunHandle } from "./RunHandle.js";
import { ServeMetrics } from "./ServeMetrics.js";
import { ServedResponses } from "./responses/ServedResponses.js";
import { HeldStore } from "../store/HeldStore.js";
import { timerDelay } from "../util/timerDelay.js";

/** The protocols served, each a folder of its own: adding one is adding its routes here. */
const PROTOCOLS: Protocol[] = [modelProtocol, chatProtocol, responsesProtocol, a2aProtocol];

/** Defaults of `serve()` (and `lllm serve`). */
export const SERVE_DEFAULTS = {
  maxWaiting: 100,
  pendingTtlMs: 10 * 60_000,
  maxPaused: 1000,
  drainTimeoutMs: 30_000,
  maxBodyBytes: 10 * 1024 * 1024,
  bodyTimeoutMs: 30_000,
  headersTimeoutMs: 30_000,
} as const;

export interface ServeOptions {
  /** The tactics to serve as models: files, prepared tactics, or prepared ones with their package refs. */
  tactics: Array<string | PreparedTactic | TacticToServe>;
  /** Package folders to load for tactics given as files (as `--package`). */
  packages?: string[];
  /** The model of every agent of the tactics given as files (as `--model`). */
  model?: string;
  /**
   * The bearer token every route but `/healthz` wants. Left out: no token (keep such a server on loopback); given but
   * undefined or blank (an unset variable) is an error, not a server open to all.
   */
  token?: string;
  /** The address served on, for the Host and Origin checks and for `listen()`; default 127.0.0.1. */
  host?: string;
  /** Runs at once; default 4 times the CPU count. */
  concurrency?: number;
  /** Requests waiting for a place past `concurrency`, before more are refused with a 429; default 100. */
  maxWaiting?: number;
  /** How long a run paused at a client's tool calls waits for their results, in milliseconds; default 10 minutes. */
  pendingTtlMs?: number;
  /**
   * Runs kept paused at once (at client tool calls, or an approval); past that the one paused longest is cancelled, so
   * that clients who never come back cannot fill the server's memory within `pendingTtlMs`; default 1000.
   */
  maxPaused?: number;
  /** Ceilings over every request's limits (and the tactics' own): `maxCost`, `maxTokens`, `maxDuration`. */
  limits?: RunLimits;
  /** Calls to tools that need approval: `all` runs them, `none` (default) refuses them to the model. */
  approve?: "all" | "none";
  /** The one origin browsers may call from (CORS); default none. */
  corsOrigin?: string;
  /**
   * The base URL clients reach the server at (`https://agents.example.com`), for the A2A agent card's endpoint; by
   * default the address each request came to (its Host header).
   */
  publicUrl?: string;
  /** The largest request body, in bytes; default 10 MB. */
  maxBodyBytes?: number;
  /** How long a request's headers and its body may each take to arrive, in milliseconds; default 30 s. */
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** `false` records no run in the run store. */
  log?: boolean;
  /**
   * Run the requests on the workers of this Redis (`redis://…`: `lllm worker --queue` processes, here or on other
   * machines) instead of in this process; their text streams back through Redis.
   */
  queue?: string;
  /** The MCP endpoint's handler, served at `/mcp` (the CLI mounts the served packages' MCP server). */
  mcp?: (request: IncomingMessage, response: ServerResponse) => Promise<void>;
  /** Where warnings and failed requests are reported; default stderr. */
  warn?: (message: string) => void;
}

/** A served set of tactics: a request handler to mount, or a server of its own (`listen`). */
export interface LllmServer {
  /** The `node:http` request handler: mount it in your own server, or call `listen()`. */
  handler: (request: IncomingMessage, response: ServerResponse) => void;
  /** The model ids served. */
  models: string[];
  /** Listen on `port` (0: any free one) at the `host` given; resolves with the base URL (`http://127.0.0.1:8080`). */
  listen(port: number): Promise<string>;
  /** The server `listen()` made. */
  server: Server | undefined;
  /**
   * Stop: refuse new requests (503), cancel the runs waiting for a client's tool results, let the runs in flight
   * finish for `drainTimeoutMs` (default 30 s), then cancel them (recorded as interrupted); resolves once every
   * run has ended and, when `listen()` made the server, it is closed.
   */
  stop(options?: { drainTimeoutMs?: number }): Promise<void>;
  /** Cancel every run now (a second Ctrl-C while stopping); `stop()` then ends without waiting longer. */
  cancel(): void;
  /**
   * Aborted, with the error as its reason, when the server cannot go on: with `queue`, its Redis stayed away longer
   * than the reconnect window (LLLM_QUEUE_RECONNECT_MS) or refused the password. Stop it then (a supervisor restarts it).
   */
  failed: AbortSignal;
}

/**
 * Serve tactics over HTTP as OpenAI-compatible models (`/v1/models`, `/v1/chat/completions`, `/v1/responses`) and
 * as an A2A agent (`/.well-known/agent-card.json`, `/a2a`): the routes of every protocol in `PROTOCOLS`; `/healthz`,
 * `/metrics`, and `/mcp` when given. Each request is a recorded run with its
 * limits, cancelled when its client goes away.
 */
export async function serve(options: ServeOptions): Promise<LllmServer> {
  // 0 (or NaN) would cancel every run the moment it pauses.
  if (options.maxPaused !== undefined && !(Number.isInteger(options.maxPaused) && options.maxPaused >= 1)) throw new ConfigError("usage_serve", `maxPaused must be a whole number >= 1, got ${options.maxPaused}`, { hint: "leave it out for the default, 1000" });
  // `token: process.env.LLLM_TOKEN` with the variable unset or empty must not open the server to every caller:
  // leaving `token` out is how one without a token is asked for. (A blank token would also match a header of
  // "Bearer" and a no-break space, which the comparison trims to nothing.)
  if ("token" in options && (options.token === undefined || options.token.trim() === "")) {
    throw new ConfigError("serve_token_missing", `serve(): \`token\` is ${options.token === undefined ? "undefined" : "empty"}, so every caller would be let in`, { hint: "Set the variable the token comes from (e.g. export LLLM_TOKEN=$(openssl rand -hex 32)); to serve without a token (on loopback only), leave `token` out." });
  }
  const tactics: TacticToServe[] = [];
  for (const entry of options.tactics) {
    if (typeof entry === "string") tactics.push({ prepared: await prepareTactic(entry, { ...(options.packages ? { packages: options.packages } : {}), ...(options.model !== undefined ? { model: options.model } : {}) }) });
    else if ("prepared" in entry) tactics.push(entry);
    else tactics.push({ prepared: entry });
  }
  if (tactics.length === 0) throw new ConfigError("serve_no_models", "nothing to serve: no tactic was given", { hint: "Give tactic files or package folders: lllm serve weather.yaml, or lllm serve ./my-package." });
  const warn = options.warn ?? ((message: string) => void process.stderr.write(`lllm: warning: ${message}\n`));
  const host = options.host ?? "127.0.0.1";
  const admission = new Admission({ concurrency: options.concurrency ?? 4 * availableParallelism(), maxWaiting: options.maxWaiting ?? SERVE_DEFAULTS.maxWaiting });
  const paused = new PausedRuns({ ttlMs: options.pendingTtlMs ?? SERVE_DEFAULTS.pendingTtlMs, max: options.maxPaused ?? SERVE_DEFAULTS.maxPaused });
  const runs = new Set<RunHandle>();
  let draining = false;
  const models = new ServedModels(tactics);
  const pendingTtlMs = options.pendingTtlMs ?? SERVE_DEFAULTS.pendingTtlMs;
  // Loaded only with --queue: ioredis stays out of every other server.
  const bridge = options.queue === undefined ? undefined : await (await import("./queue/QueueBridge.js")).QueueBridge.open({ url: options.queue, models: models.list(), warn, say: (message) => process.stderr.write(`lllm: ${message}\n`) });
  // One connection for the server's life (see HeldStore), closed when it stops.
  const store = options.log !== false ? new HeldStore(storeFile(process.env, tactics[0]!.prepared.settings.home)) : undefined;
  const context: ServeContext = {
    models,
    admission,
    paused,
    metrics: new ServeMetrics(() => ({ inFlight: admission.running, waiting: admission.waiting, paused: paused.size })),
    responses: new ServedResponses({ ...(store ? { store } : {}), warn }),
    runs,
    limits: options.limits ?? {},
    auth: options.token !== undefined,
    ...(options.publicUrl !== undefined ? { publicUrl: options.publicUrl.replace(/\/+$/, "") } : {}),
    approve: options.approve === "all" ? approveAll : approveNone,
    log: options.log ?? true,
    ...(store ? { store } : {}),
    // Once, not per run: a served request's environment is the server's (see startRunLog). The token too: whoever has
    // it runs these tactics with this user's keys, whatever its variable is named (or made for the session, in no
    // variable). Only the records': a client that reads it in an answer is one that sent it.
    environmentSecrets: [...environmentSecrets(process.env), ...(options.token !== undefined ? [options.token] : [])],
    warn,
    ...(bridge
      ? {
          queue: {
            createRun: (runOptions) => bridge.createRun(runOptions, pendingTtlMs, options.log ?? true),
            adopt: (callIds) => bridge.adopt(callIds, (id) => models.get(id)),
            gauges: () => bridge.gauges(),
          },
        }
      : {}),
    get draining() {
      return draining;
    },
  };
  const handle = createServeHandler({
    context,
    protocols: PROTOCOLS,
    ...(options.token !== undefined ? { token: options.token } : {}),
    host,
    ...(options.corsOrigin !== undefined ? { corsOrigin: options.corsOrigin } : {}),
    maxBodyBytes: options.maxBodyBytes ?? SERVE_DEFAULTS.maxBodyBytes,
    bodyTimeoutMs: options.bodyTimeoutMs ?? SERVE_DEFAULTS.bodyTimeoutMs,
    ...(options.mcp ? { mcp: options.mcp } : {}),
    log: (text) => process.stderr.write(`${text}\n`),
  });
  // Answers still being written: stopping waits for them after the runs end (an answer is written after its run).
  let answering = 0;
  let allAnswered: (() => void) | undefined;
  const handler = (request: IncomingMessage, response: ServerResponse): void => {
    answering++;
    response.once("close", () => {
      answering--;
      if (answering === 0) allAnswered?.();
    });
    handle(request, response);
  };

  let server: Server | undefined;
  let stopping: Promise<void> | undefined;
  const result: LllmServer = {
    handler,
    failed: bridge?.failed ?? new AbortController().signal,
    models: context.models.ids,
    get server() {
      return server;
    },
    async listen(port) {
      server = createServer({ headersTimeout: options.headersTimeoutMs ?? SERVE_DEFAULTS.headersTimeoutMs, requestTimeout: 0 }, handler);
      const listening = server;
      await new Promise<void>((resolve, reject) => {
        const failed = (error: NodeJS.ErrnoException): void => {
          reject(new ConfigError("serve_listen_failed", `cannot listen on ${host}:${port}: ${error.code === "EADDRINUSE" ? "the port is in use" : error.message}`, { hint: "Pick another port (--http HOST:PORT), or 0 for any free one." }));
        };
        listening.once("error", failed);
        listening.listen(port, host.replace(/^\[|\]$/g, ""), () => {
          listening.off("error", failed);
          resolve();
        });
      });
      listening.on("error", (error) => warn(`HTTP server error: ${error.message}`));
      const address = listening.address() as AddressInfo;
      return `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
    },
    cancel() {
      draining = true;
      paused.abortAll(new InterruptedError("interrupted", "the server was stopped"));
      for (const run of runs) run.abort(new InterruptedError("interrupted", "the server was stopped"));
    },
    stop(stopOptions = {}) {
      stopping ??= (async () => {
        draining = true;
        // No new connection; idle keep-alive ones close; a request on a busy one is answered 503.
        server?.close();
        server?.closeIdleConnections();
        paused.abortAll(new InterruptedError("interrupted", "the server stopped before the client's tool results came"));
        const inFlight = [...runs].map((run) => run.done);
        const timeoutMs = stopOptions.drainTimeoutMs ?? SERVE_DEFAULTS.drainTimeoutMs;
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), timerDelay(timeoutMs))));
        const outcome = await Promise.race([Promise.allSettled(inFlight), late]);
        clearTimeout(timer);
        if (outcome === "late") for (const run of runs) run.abort(new InterruptedError("interrupted", `the server stopped: the run did not finish within the drain timeout (${Math.round(timeoutMs / 1000)} s)`));
        await Promise.allSettled([...runs].map((run) => run.done));
        if (answering > 0) await new Promise<void>((resolve) => (allAnswered = resolve));
        await bridge?.close();
        store?.close();
        if (server) {
          const closing = server;
          await new Promise<void>((resolve) => {
            closing.close(() => resolve());
            closing.closeAllConnections();
          });
        }
      })();
      return stopping;
    },
  };
  return result;
}
