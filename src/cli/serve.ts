import { randomBytes } from "node:crypto";
import { existsSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { queueConnection, redactQueueUrl } from "../batch/queue/queueConnection.js";
import { ConfigError } from "../errors.js";
import type { RunLimits } from "../limits/index.js";
import { loadServedPackage } from "../mcp/serve/createPackageServer.js";
import { isLoopbackHost, isWildcardHost } from "../mcp/serve/httpGuard.js";
import type { ServedPackage } from "../mcp/serve/ServedPackage.js";
import type { Registry } from "../registry/index.js";
import { mcpEndpoint, type McpEndpoint } from "../serve/mcpEndpoint.js";
import { serve, SERVE_DEFAULTS } from "../serve/serve.js";
import type { TacticToServe } from "../serve/ServedModels.js";
import { isDefaultsFile, packageTacticTools } from "../tactics/packageTacticTools.js";
import { mcpServedRunner } from "../run/mcpServedRunner.js";
import { environmentSecrets } from "../util/redact.js";
import { looksLikeQualifiedRef } from "../registry/ref.js";
import { prepareTactic } from "../tactics/prepareTactic.js";
import { assertTemplateVariables } from "../tactics/templateVariables.js";
import { startRunBudget } from "../tactics/tacticBudget.js";
import { steadyHeap } from "../util/steadyHeap.js";
import { stopSignal, takeFirstStop } from "./handleSignals.js";
import { loadRegistry } from "./loadRegistry.js";
import { madeTokenLine, parseHttpAddress } from "./httpAddress.js";
import { numberFlag, secondsFlag } from "./numberFlag.js";
import { warn, writeErr } from "./output.js";
import { packagesOrHere } from "./packagesOrHere.js";
import { positiveInteger } from "./positiveInteger.js";
import { resolveTacticTarget } from "./resolveTacticTarget.js";

/** Flags of `lllm serve`. */
export interface ServeCommandOptions {
  /** `[HOST:]PORT`, default 127.0.0.1:8080. */
  http?: string;
  tokenEnv?: string;
  /** `--no-auth` sets it false. */
  auth?: boolean;
  concurrency?: string;
  maxWaiting?: string;
  pendingTtl?: string;
  maxPaused?: string;
  maxCost?: string;
  maxTokens?: string;
  maxDuration?: string;
  approve?: "all" | "none";
  corsOrigin?: string;
  publicUrl?: string;
  drainTimeout?: string;
  package?: string[];
  model?: string;
  /** `--no-log` sets it false. */
  log?: boolean;
  /** Run the requests on the workers of this Redis. */
  queue?: string;
}

/**
 * `lllm serve [TACTIC | PKG_DIR]...`: serve tactics as OpenAI-compatible models over HTTP (and the packages' tools
 * over MCP at /mcp) until a signal: the first stops accepting and lets the runs in flight finish (`--drain-timeout`),
 * then exits 0; a second cancels them.
 */
export async function serveCommand(targets: string[], options: ServeCommandOptions): Promise<void> {
  const http = parseHttpAddress(options.http ?? "127.0.0.1:8080", "usage_serve");
  const token = serveToken(options, http.host);
  const limits = limitFlags(options);
  const concurrency = options.concurrency === undefined ? undefined : positiveInteger(options.concurrency, "--concurrency", "e.g. --concurrency 16");
  const maxWaiting = options.maxWaiting === undefined ? undefined : wholeNumber(options.maxWaiting, "--max-waiting", "e.g. --max-waiting 100 (0: refuse when every place is taken)");
  const pendingTtlMs = options.pendingTtl === undefined ? undefined : seconds(options.pendingTtl, "--pending-ttl", "600") * 1000;
  const maxPaused = options.maxPaused === undefined ? undefined : positiveInteger(options.maxPaused, "--max-paused", "e.g. --max-paused 1000");
  const drainTimeoutMs = options.drainTimeout === undefined ? SERVE_DEFAULTS.drainTimeoutMs : seconds(options.drainTimeout, "--drain-timeout", "30", true) * 1000;
  if (options.publicUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(options.publicUrl)) throw new ConfigError("usage_serve", `--public-url ${JSON.stringify(options.publicUrl)} is not an http(s) URL`, { hint: "Give the URL clients reach this server at, e.g. --public-url https://agents.example.com" });
  if (options.corsOrigin !== undefined && !/^https?:\/\/[^/\s]+$/.test(options.corsOrigin)) throw new ConfigError("usage_serve", `--cors-origin ${JSON.stringify(options.corsOrigin)} is not an origin`, { hint: "Give scheme, host and port, no path: --cors-origin https://app.example.com" });

  if (options.queue !== undefined) queueConnection(options.queue);
  steadyHeap();
  const { tactics, packages } = await servedTactics(targets, options);
  for (const { prepared } of tactics) {
    // A tactic that needs --var values cannot be served (clients give only messages); under a cost ceiling every
    // model needs a price. Both are found now, not at the first request.
    assertTemplateVariables(prepared, {}, { hint: (name) => `Give it a default in the tactic's \`vars:\` (a served tactic gets no --var), or write {{${name}}} for literal braces.` });
    if (limits.maxCost !== undefined) startRunBudget(prepared, { maxCost: limits.maxCost }).close();
  }
  let mcp: McpEndpoint | undefined;
  if (packages.length > 0) {
    const loaded: ServedPackage[] = [];
    // A tactic called over /mcp is recorded like a request to /v1 (`lllm logs --served`).
    const runner = mcpServedRunner({ environmentSecrets: environmentSecrets(process.env), ...(options.log === false ? { log: false } : {}), warn });
    for (const { registry, name } of packages) {
      const tools = await packageTacticTools(registry, name, { runner });
      loaded.push(await loadServedPackage(registry, name, { extraTools: tools.tools }));
    }
    mcp = mcpEndpoint(loaded, { host: http.host, ...(token.value !== undefined ? { token: token.value } : {}) });
  }
  const server = await serve({
    tactics,
    ...(token.value !== undefined ? { token: token.value } : {}),
    host: http.host,
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(maxWaiting !== undefined ? { maxWaiting } : {}),
    ...(maxPaused !== undefined ? { maxPaused } : {}),
    ...(pendingTtlMs !== undefined ? { pendingTtlMs } : {}),
    limits,
    ...(options.approve ? { approve: options.approve } : {}),
    ...(options.corsOrigin !== undefined ? { corsOrigin: options.corsOrigin } : {}),
    ...(options.publicUrl !== undefined ? { publicUrl: options.publicUrl } : {}),
    ...(options.log === false ? { log: false } : {}),
    ...(mcp ? { mcp: mcp.handle } : {}),
    ...(options.queue !== undefined ? { queue: options.queue } : {}),
    warn,
  });
  const url = await server.listen(http.port);
  const serving = `lllm: serving ${server.models.length === 1 ? "1 model" : `${server.models.length} models`} (${server.models.join(", ")}) at ${url}/v1${mcp ? `, MCP at ${url}/mcp` : ""}, A2A at ${url}/a2a${token.from === "env" ? ` (bearer token from $${options.tokenEnv})` : ""}; Ctrl-C stops`;
  // The one place a made token is shown: whoever has it runs these tactics with this user's keys. Written with the
  // address, in one write: a script that waits for the address finds the token beside it.
  writeErr(token.from === "made" && token.value !== undefined ? `${serving}\n${madeTokenLine(token.value)}` : serving);
  if (token.from === "none") warn("serving with --no-auth: any user of this machine can run these tactics, with your keys");
  if (options.queue !== undefined) writeErr(`lllm: requests run on the workers of ${redactQueueUrl(options.queue)} (lllm worker --queue ${redactQueueUrl(options.queue)} -p DIR, here or on other machines)`);

  const stopped = new Promise<void>((resolve) => {
    takeFirstStop((signal) => {
      writeErr(`lllm: ${signal === "SIGINT" ? "interrupted" : `received ${signal}`}; no new requests, letting the runs in flight finish (up to ${Math.round(drainTimeoutMs / 1000)} s; Ctrl-C again cancels them)`);
      void server.stop({ drainTimeoutMs }).then(resolve);
    });
  });
  // A second signal: cancel the runs now (they are recorded as interrupted).
  stopSignal().addEventListener("abort", () => server.cancel(), { once: true });
  // Its queue's Redis lost for good: the server stops, failing, rather than serving nothing while it seems up.
  const lost = new Promise<{ error: unknown }>((resolve) => {
    if (server.failed.aborted) resolve({ error: server.failed.reason });
    else server.failed.addEventListener("abort", () => resolve({ error: server.failed.reason }), { once: true });
  });
  const failure = await Promise.race([stopped.then(() => undefined), lost]);
  if (failure) {
    await server.stop({ drainTimeoutMs: 0 });
    await mcp?.close();
    throw failure.error;
  }
  await mcp?.close();
}

/**
 * The bearer token, by `lllm mcp serve --http`'s rule: `--token-env`'s, which must be set; else on a loopback
 * address one made for this session, unless `--no-auth`; a server reachable from other machines needs `--token-env`.
 */
function serveToken(options: ServeCommandOptions, host: string): { value?: string; from: "env" | "made" | "none" } {
  if (options.auth === false) {
    if (options.tokenEnv !== undefined) throw new ConfigError("usage_serve", "--no-auth and --token-env contradict each other", { hint: "Give --token-env NAME to require that token, or --no-auth to require none." });
    if (!isLoopbackHost(host)) throw new ConfigError("usage_serve", `--no-auth serves on this machine only, not on ${host}`, { hint: "Serving beyond this machine needs a token (--token-env NAME); or serve on 127.0.0.1." });
    return { from: "none" };
  }
  if (options.tokenEnv === undefined) {
    if (!isLoopbackHost(host)) {
      const where = isWildcardHost(host) ? `on every interface (${host})` : `on ${host}`;
      throw new ConfigError("usage_serve", `serving ${where} needs a token`, { hint: "Serving beyond this machine needs a token (--token-env NAME, the variable holding the token clients must send); or serve on 127.0.0.1." });
    }
    return { value: randomBytes(32).toString("base64url"), from: "made" };
  }
  const value = process.env[options.tokenEnv];
  if (value === undefined || value.trim() === "") throw new ConfigError("serve_token_missing", `--token-env ${options.tokenEnv}: the variable \`${options.tokenEnv}\` is not set (or empty)`, { hint: `Set it to the token clients must send (Authorization: Bearer …), e.g. export ${options.tokenEnv}=$(openssl rand -hex 32).` });
  return { value: value.trim(), from: "env" };
}

/**
 * The tactics to serve: each TACTIC (a file or `pkg.tactics:name`), and every tactic of each PKG_DIR (shared
 * defaults files left out); with no argument, the package in the current folder. Package folders are also served
 * over MCP.
 */
export async function servedTactics(targets: string[], options: ServeCommandOptions): Promise<{ tactics: TacticToServe[]; packages: Array<{ registry: Registry; name: string }> }> {
  const given = targets.length > 0 ? targets : (packagesOrHere(undefined) ?? []);
  if (given.length === 0) throw new ConfigError("usage_serve", "nothing to serve: give tactic files or package folders, or run lllm serve inside a package", { hint: "e.g. lllm serve packages-example/weather, or lllm serve weather.yaml" });
  const dirs = given.filter((target) => existsSync(target) && statSync(target).isDirectory());
  const prepareOptions = { ...(options.model ? { model: options.model } : {}), ...(options.package ? { packages: options.package } : {}) };
  const tactics: TacticToServe[] = [];
  const packages: Array<{ registry: Registry; name: string }> = [];
  const registry = dirs.length > 0 ? await loadRegistry([...dirs, ...(options.package ?? [])]) : undefined;
  for (const target of given) {
    // Neither there nor a ref nor named as a tactic file: most likely a package folder given with a wrong path.
    if (!existsSync(target) && !looksLikeQualifiedRef(target) && !/\.(ya?ml|json)$/i.test(target)) {
      throw new ConfigError("config_not_found", `no such tactic file or package folder: ${target}`, { location: { file: target }, hint: "lllm serve takes package folders (packages-example/weather), tactic files (weather.yaml) and refs (weather.tactics:weather)." });
    }
    if (!dirs.includes(target)) {
      tactics.push({ prepared: await prepareTactic(await resolveTacticTarget(target, options.package), prepareOptions) });
      continue;
    }
    const real = realpathSync(path.resolve(target));
    const pkg = registry!.list().find((candidate) => realpathSync(candidate.dir) === real);
    if (!pkg) throw new ConfigError("package_not_found", `no package was loaded from \`${target}\``, { hint: "Check that the folder is a package (lllm.toml, lllm.yaml, package.json#lllm, or a tools/ folder)." });
    packages.push({ registry: registry!, name: pkg.name });
    const entries = [...pkg.tactics.values()].filter((entry) => !isDefaultsFile(entry.file));
    if (entries.length === 0) warn(`package \`${pkg.name}\` has no tactics: only its tools are served (at /mcp)`);
    for (const entry of entries) tactics.push({ prepared: await prepareTactic(entry.file, { ...prepareOptions, registry: registry! }), ref: entry.ref });
  }
  return { tactics, packages };
}

/** `--max-cost USD`, `--max-tokens N`, `--max-duration SECONDS`: ceilings over every request's limits. */
function limitFlags(options: ServeCommandOptions): RunLimits {
  const limits: RunLimits = {};
  if (options.maxCost !== undefined) limits.maxCost = number(options.maxCost, "--max-cost", "a number of US dollars above 0", "0.50", (value) => value > 0);
  if (options.maxTokens !== undefined) limits.maxTokens = number(options.maxTokens, "--max-tokens", "a whole number of tokens above 0", "200000", (value) => Number.isInteger(value) && value > 0);
  if (options.maxDuration !== undefined) limits.maxDuration = number(options.maxDuration, "--max-duration", "a number of seconds above 0", "300", (value) => value > 0);
  return limits;
}

function seconds(text: string, flag: string, example: string, zero = false): number {
  return secondsFlag(text, flag, example, { zero, code: "usage_serve" });
}

function wholeNumber(text: string, flag: string, hint: string): number {
  return number(text, flag, "a whole number >= 0", hint.replace(/^e\.g\. \S+ /, ""), (value) => Number.isInteger(value) && value >= 0);
}

function number(text: string, flag: string, what: string, example: string, valid: (value: number) => boolean): number {
  return numberFlag(text, flag, what, example, valid, "usage_serve");
}
