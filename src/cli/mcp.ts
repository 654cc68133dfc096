import { randomBytes } from "node:crypto";
import { existsSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { ConfigError } from "../errors.js";
// From their own modules, not the folder's index: importing that runs every module it re-exports, the MCP client's too.
import { loadServedPackage, serverFor } from "../mcp/serve/createPackageServer.js";
import { parseServerSpec } from "../mcp/parseServerSpec.js";
import { serveStdio } from "../mcp/serve/serveStdio.js";
import { isLoopbackHost, isWildcardHost } from "../mcp/serve/httpGuard.js";
import { DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT_MS, serveHttp } from "../mcp/serve/serveHttp.js";
import { loadRegistry } from "./loadRegistry.js";
import { positiveInteger } from "./positiveInteger.js";
import { mcpClientHooks } from "./mcpClientHooks.js";
import { packageTacticTools } from "../tactics/packageTacticTools.js";
import { mcpServedRunner } from "../run/mcpServedRunner.js";
import { environmentSecrets } from "../util/redact.js";
import { stopSignal } from "./handleSignals.js";
import { steadyHeap } from "../util/steadyHeap.js";
import { SCHEMA_VERSION, warn, writeErr, writeOut } from "./output.js";
import { summaryLine } from "../util/firstLine.js";
import { escapeControlCharacters, escapeJsonControlCharacters } from "../util/escapeControlCharacters.js";
import { plural } from "../util/plural.js";
import { madeTokenLine, parseHttpAddress } from "./httpAddress.js";

/** Flags of `lllm mcp tools`. */
export interface McpToolsOptions {
  /** Print the tools as the model sees them (`toTool()`): `{schema_version, tools: [...]}`. */
  json?: boolean;
  /** `KEY=VALUE` for a stdio server's environment (repeatable). */
  env?: string[];
  /** `Name: value` for an HTTP server's requests (repeatable). */
  header?: string[];
  /** The environment variable holding an HTTP server's bearer token (sent as `Authorization: Bearer …`). */
  bearerTokenEnv?: string;
}

/**
 * `lllm mcp tools <server>`: start (or reach) one MCP server, list its tools, and stop it. The spec is a URL,
 * a command line in one string, or the words after `--`. Prints one line per tool: its name and the first line
 * of its description; with `--json`, the tools exactly as lllm offers them to a model.
 */
export async function mcpToolsCommand(spec: string | string[], options: McpToolsOptions = {}): Promise<void> {
  const config = parseServerSpec(spec, { ...(options.env ? { env: options.env } : {}), ...(options.header ? { header: options.header } : {}), ...(options.bearerTokenEnv !== undefined ? { bearerTokenEnv: options.bearerTokenEnv } : {}) });
  // Imported here: the client (the SDK's client, its zod) is `mcp tools`' alone, not `mcp serve`'s.
  const { McpConnections } = await import("../mcp/McpConnections.js");
  const connections = new McpConnections({ hooks: mcpClientHooks({ verbose: false, signal: stopSignal() }) });
  try {
    const tools = await connections.get(config);
    if (options.json) {
      writeOut(escapeJsonControlCharacters(JSON.stringify({ schema_version: SCHEMA_VERSION, tools: tools.map((tool) => tool.toTool()) }, null, 2)));
      return;
    }
    if (tools.length === 0) {
      warn(`MCP server \`${config.name}\` has no tools`);
      return;
    }
    // Names and descriptions are the server's text: no terminal escape of theirs reaches the terminal.
    const names = tools.map((tool) => escapeControlCharacters(tool.name, { all: true }));
    const width = Math.max(...names.map((name) => name.length));
    tools.forEach((tool, index) => writeOut(`${names[index]!.padEnd(width)}  ${escapeControlCharacters(summaryLine(tool.description), { all: true })}`.trimEnd()));
  } finally {
    await connections.closeAll();
  }
}

/** Flags of `lllm mcp serve`. */
export interface McpServeOptions {
  /** More package folders to load (dependencies resolve by themselves; these are for declarations' bindings). */
  package?: string[];
  /** `[HOST:]PORT`: serve over Streamable HTTP instead of stdio (host 127.0.0.1 by default; port 0 picks one). */
  http?: string;
  /** The environment variable holding the bearer token HTTP clients must send; without it a token is made. */
  tokenEnv?: string;
  /** `--no-auth` sets it false: serve on loopback with no token at all (any user of the machine may call). */
  auth?: boolean;
  /** With `--http`: the most sessions open at once (default 100); a new one past it is refused (503). */
  maxSessions?: string;
  /** With `--http`: seconds a session may stay idle (no request, no open stream) before it is closed (default 1800). */
  idleTimeout?: string;
  /** The protocol streams; default the process's stdin and stdout (tests pass their own). */
  stdin?: Readable;
  stdout?: Writable;
}

/**
 * `lllm mcp serve <package dir>`: serve a package over MCP until the client disconnects (stdio) or a signal stops
 * it (`--http`): its tools and tactics as tools, its prompts, and its resources. Over stdio, stdout is the
 * protocol channel, so anything a tool prints with console.log goes to stderr instead of corrupting the stream.
 */
export async function mcpServeCommand(dir: string, options: McpServeOptions = {}): Promise<void> {
  const http = options.http === undefined ? undefined : parseHttpAddress(options.http);
  const token = tokenFrom(options.tokenEnv, options.auth !== false, http);
  const sessionLimits = sessionLimitsFrom(options, http !== undefined);
  const absolute = path.resolve(dir);
  if (!existsSync(absolute) || !statSync(absolute).isDirectory()) {
    throw new ConfigError("package_not_found", `package folder \`${dir}\` does not exist`, { hint: "Give the folder of a package: the one with lllm.toml, lllm.yaml or a tools/ folder." });
  }
  const real = realpathSync(absolute);
  const registry = await loadRegistry([dir, ...(options.package ?? [])]);
  const pkg = registry.list().find((candidate) => candidate.dir === real || realpathSync(candidate.dir) === real);
  if (!pkg) throw new ConfigError("package_not_found", `no package was loaded from \`${dir}\``, { hint: "Check that the folder is a package (lllm.toml, lllm.yaml, package.json#lllm, or a tools/ folder)." });
  steadyHeap();

  // Tactics are served as tools too: each call runs the tactic here, with this side's models and keys.
  // Each call of a tactic is recorded in the run log, as a request to `lllm serve` is (`lllm logs --served`).
  // The token is in the records' secrets too (see serve's), whatever its variable is named.
  const runner = mcpServedRunner({ environmentSecrets: [...environmentSecrets(process.env), ...(token.value !== undefined ? [token.value] : [])], warn });
  const tactics = await packageTacticTools(registry, pkg.name, { runner });
  for (const { ref, reason } of tactics.skipped) warn(`not serving tactic \`${ref}\`: ${reason}`);
  const served = await loadServedPackage(registry, pkg.name, { extraTools: tactics.tools });
  for (const { what, reason } of served.skipped) warn(`not serving ${what}: ${reason}`);
  const names = [...served.tools.keys()];
  const counts = [plural(names.length, "tool"), ...(served.prompts.size > 0 ? [plural(served.prompts.size, "prompt")] : []), ...(served.resources.size + served.templates.length > 0 ? [plural(served.resources.size + served.templates.length, "resource")] : [])];
  const what = `${counts.join(", ")} of package \`${pkg.name}\``;

  if (http) {
    const service = await serveHttp({ ...http, ...sessionLimits, newServer: () => serverFor(served), ...(token.value !== undefined ? { token: token.value } : {}), signal: stopSignal() });
    if (token.from === "none") warn("serving with --no-auth: any user of this machine can call these tools and tactics, with your keys");
    const serving = `lllm: serving ${what} at ${service.url}${token.from === "env" ? ` (bearer token from $${options.tokenEnv})` : ""} (${names.join(", ")}); Ctrl-C stops`;
    // The one place a made token is shown: whoever has it can call these tools with this user's keys. In the same
    // write as the address, so that a script that waits for the address finds the token beside it.
    writeErr(token.from === "made" && token.value !== undefined ? `${serving}\n${madeTokenLine(token.value)}` : serving);
    await service.closed;
    return;
  }
  writeErr(`lllm: serving ${what} over stdio (${names.join(", ")})`);
  const restore = options.stdout ? undefined : divertConsoleToStderr();
  try {
    await serveStdio(serverFor(served), { ...(options.stdin ? { stdin: options.stdin } : {}), ...(options.stdout ? { stdout: options.stdout } : {}), signal: stopSignal() });
  } finally {
    restore?.();
  }
}

/**
 * The bearer token HTTP clients must send: the one named by `--token-env`, which must be set; else, on a loopback
 * address, one made for this session (any user of the machine can reach 127.0.0.1, and would otherwise call the
 * tools with this user's keys), unless `--no-auth` says none. A server reachable from other machines (any host but
 * a loopback one: every interface, or one of this machine's network addresses) needs `--token-env`.
 */
function tokenFrom(name: string | undefined, auth: boolean, http: { host: string } | undefined): { value?: string; from: "env" | "made" | "none" | "stdio" } {
  if (name !== undefined && !http) throw new ConfigError("usage_mcp_http", "--token-env applies to --http only", { hint: "A stdio server is reached only by the client that started it; drop --token-env, or add --http [HOST:]PORT." });
  if (!auth) {
    if (!http) throw new ConfigError("usage_mcp_http", "--no-auth applies to --http only", { hint: "A stdio server is reached only by the client that started it; drop --no-auth." });
    if (name !== undefined) throw new ConfigError("usage_mcp_http", "--no-auth and --token-env contradict each other", { hint: "Give --token-env NAME to require that token, or --no-auth to require none." });
    if (!isLoopbackHost(http.host)) throw new ConfigError("usage_mcp_http", `--no-auth serves on this machine only, not on ${http.host}`, { hint: "Serving beyond this machine needs a token (--token-env NAME); or serve on 127.0.0.1." });
    return { from: "none" };
  }
  if (!http) return { from: "stdio" };
  if (!isLoopbackHost(http.host) && name === undefined) {
    const where = isWildcardHost(http.host) ? `on every interface (${http.host})` : `on ${http.host}`;
    throw new ConfigError("usage_mcp_http", `serving ${where} needs a token`, {
      hint: "serving beyond this machine needs a token (--token-env NAME, the variable holding the token clients must send); or serve on 127.0.0.1.",
    });
  }
  if (name === undefined) return { value: randomBytes(32).toString("base64url"), from: "made" };
  const token = process.env[name];
  if (token === undefined || token.trim() === "") throw new ConfigError("mcp_serve_token_missing", `--token-env ${name}: the variable \`${name}\` is not set (or empty)`, { hint: `Set it to the token clients must send (Authorization: Bearer …), e.g. export ${name}=$(openssl rand -hex 32).` });
  return { value: token.trim(), from: "env" };
}

/** `--max-sessions` and `--idle-timeout`, which apply to `--http` only. */
function sessionLimitsFrom(options: McpServeOptions, http: boolean): { maxSessions: number; sessionIdleTimeoutMs: number } {
  for (const [flag, value] of [["--max-sessions", options.maxSessions], ["--idle-timeout", options.idleTimeout]] as const) {
    if (value !== undefined && !http) throw new ConfigError("usage_mcp_http", `${flag} applies to --http only`, { hint: `A stdio server has one session, its client's; drop ${flag}, or add --http [HOST:]PORT.` });
  }
  return {
    maxSessions: options.maxSessions === undefined ? DEFAULT_MAX_SESSIONS : positiveInteger(options.maxSessions, "--max-sessions", "e.g. --max-sessions 100"),
    sessionIdleTimeoutMs: options.idleTimeout === undefined ? DEFAULT_SESSION_IDLE_TIMEOUT_MS : positiveInteger(options.idleTimeout, "--idle-timeout", "seconds, e.g. --idle-timeout 1800 (30 minutes)") * 1000,
  };
}

/** Send console.log/info/debug to stderr; returns the function that puts them back. */
function divertConsoleToStderr(): () => void {
  const saved = { log: console.log, info: console.info, debug: console.debug };
  console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);
  return () => Object.assign(console, saved);
}
