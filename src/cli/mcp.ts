import { existsSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { ConfigError } from "../errors.js";
import { createPackageServer, McpConnections, packageTools, parseServerSpec, serveStdio } from "../mcp/index.js";
import { loadRegistry } from "./loadRegistry.js";
import { mcpClientHooks } from "./mcpClientHooks.js";
import { packageTacticTools } from "../tactics/packageTacticTools.js";
import { stopSignal } from "./handleSignals.js";
import { SCHEMA_VERSION, warn, writeErr, writeOut } from "./output.js";
import { summaryLine } from "../util/firstLine.js";
import { escapeControlCharacters, escapeJsonControlCharacters } from "../util/escapeControlCharacters.js";

/** Flags of `lllm mcp tools`. */
export interface McpToolsOptions {
  /** Print the tools as the model sees them (`toTool()`): `{schema_version, tools: [...]}`. */
  json?: boolean;
  /** `KEY=VALUE` for a stdio server's environment (repeatable). */
  env?: string[];
  /** `Name: value` for an HTTP server's requests (repeatable). */
  header?: string[];
}

/**
 * `lllm mcp tools <server>`: start (or reach) one MCP server, list its tools, and stop it. The spec is a URL,
 * a command line in one string, or the words after `--`. Prints one line per tool: its name and the first line
 * of its description; with `--json`, the tools exactly as lllm offers them to a model.
 */
export async function mcpToolsCommand(spec: string | string[], options: McpToolsOptions = {}): Promise<void> {
  const config = parseServerSpec(spec, { ...(options.env ? { env: options.env } : {}), ...(options.header ? { header: options.header } : {}) });
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
  /** The protocol streams; default the process's stdin and stdout (tests pass their own). */
  stdin?: Readable;
  stdout?: Writable;
}

/**
 * `lllm mcp serve <package dir>`: serve every tool of a package over stdio until the client disconnects.
 * stdout is the protocol channel, so while serving on it, anything a tool prints with console.log goes to stderr
 * instead of corrupting the stream.
 */
export async function mcpServeCommand(dir: string, options: McpServeOptions = {}): Promise<void> {
  const absolute = path.resolve(dir);
  if (!existsSync(absolute) || !statSync(absolute).isDirectory()) {
    throw new ConfigError("package_not_found", `package folder \`${dir}\` does not exist`, { hint: "Give the folder of a package: the one with lllm.toml, lllm.yaml or a tools/ folder." });
  }
  const real = realpathSync(absolute);
  const registry = await loadRegistry([dir, ...(options.package ?? [])]);
  const pkg = registry.list().find((candidate) => candidate.dir === real || realpathSync(candidate.dir) === real);
  if (!pkg) throw new ConfigError("package_not_found", `no package was loaded from \`${dir}\``, { hint: "Check that the folder is a package (lllm.toml, lllm.yaml, package.json#lllm, or a tools/ folder)." });

  const { tools, unbound } = packageTools(registry, pkg.name);
  for (const ref of unbound) warn(`not serving \`${ref}\`: it is a declaration with no implementation among the loaded packages`);
  // Tactics are served as tools too: each call runs the tactic here, with this side's models and keys.
  const tactics = await packageTacticTools(registry, pkg.name);
  for (const { ref, reason } of tactics.skipped) warn(`not serving tactic \`${ref}\`: ${reason}`);
  const server = createPackageServer(registry, pkg.name, { extraTools: tactics.tools });
  const served = [...tools, ...tactics.tools].map((tool) => tool.name);
  writeErr(`lllm: serving ${served.length} tool${served.length === 1 ? "" : "s"} of package \`${pkg.name}\` over stdio (${served.join(", ")})`);

  const restore = options.stdout ? undefined : divertConsoleToStderr();
  try {
    await serveStdio(server, { ...(options.stdin ? { stdin: options.stdin } : {}), ...(options.stdout ? { stdout: options.stdout } : {}), signal: stopSignal() });
  } finally {
    restore?.();
  }
}

/** Send console.log/info/debug to stderr; returns the function that puts them back. */
function divertConsoleToStderr(): () => void {
  const saved = { log: console.log, info: console.info, debug: console.debug };
  console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);
  return () => Object.assign(console, saved);
}

