import type { McpServerConfig } from "../config/TacticConfig.js";
import { ConfigError } from "../errors.js";
import type { FunctionTool } from "../tools/FunctionTool.js";
import { checkServerConfig } from "./checkServerConfig.js";
import type { McpClientHooks } from "./McpClientHooks.js";
import type { McpConnection } from "./McpConnection.js";
import { mcpToolToFunction } from "./mcpToolToFunction.js";
import { selectTools } from "./selectTools.js";

/** Default time for a server to start and list its tools. */
export const DEFAULT_MCP_START_TIMEOUT_MS = 30_000;
/** Default time for one tool call. */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 60_000;

/** Settings of a run's MCP connections. */
export interface McpConnectionsOptions {
  /** Time for a server to start (spawn, initialize, list tools). Default 30 s. */
  startTimeoutMs?: number;
  /** Time for one tool call. Default 60 s. */
  callTimeoutMs?: number;
  /** Working directory of stdio servers (relative paths in `command`/`args`). Default: this process's. */
  cwd?: string;
  /**
   * What lllm does for servers' requests and notifications: questions for the user, sampling, roots, logs,
   * progress, and how an OAuth sign-in reaches the user. Without hooks: questions and sampling are declined.
   */
  hooks?: McpClientHooks;
}

/**
 * The MCP servers of one run, as tool sources. `get(config)` starts a server the first time it is needed and
 * returns its tools as FunctionTools; later calls (another agent, the same server) reuse the connection, with
 * their own `allowed_tools` and `prefix`. `closeAll()` must be called when the run ends, also on failure
 * (`try … finally`): it disconnects every server and waits for every server process to exit. Processes are
 * also killed if lllm exits or is interrupted without it.
 */
export class McpConnections {
  readonly #options: Required<Omit<McpConnectionsOptions, "cwd" | "hooks">> & { cwd: string | undefined; hooks: McpClientHooks | undefined };
  readonly #connections = new Map<string, { connection: McpConnection; ready: Promise<void> }>();

  constructor(options: McpConnectionsOptions = {}) {
    this.#options = {
      startTimeoutMs: options.startTimeoutMs ?? DEFAULT_MCP_START_TIMEOUT_MS,
      callTimeoutMs: options.callTimeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS,
      cwd: options.cwd,
      hooks: options.hooks,
    };
  }

  /**
   * The tools `config` offers from its server, starting the server on first use. A server that failed to
   * start fails again with the same error for the rest of the run rather than being started again.
   */
  async get(config: McpServerConfig): Promise<FunctionTool[]> {
    checkServerConfig(config);
    // Loaded here, not at the top: the MCP SDK is heavy, and `import "lllm"` must not load it.
    const { McpConnection } = await import("./McpConnection.js");
    const key = connectionKey(config);
    let entry = this.#connections.get(key);
    if (!entry) {
      const connection = new McpConnection(config, { cwd: this.#options.cwd, hooks: this.#options.hooks });
      entry = { connection, ready: connection.start(this.#options.startTimeoutMs) };
      this.#connections.set(key, entry);
    }
    await entry.ready;
    const tools = selectTools(entry.connection.tools, config).map((tool) => mcpToolToFunction(entry.connection, tool, { prefix: config.prefix, callTimeoutMs: this.#options.callTimeoutMs, idempotent: config.idempotent_tools?.includes(tool.name) === true }));
    const seen = new Set<string>();
    for (const tool of tools) {
      if (seen.has(tool.name)) {
        throw new ConfigError("mcp_tool_name_clash", `MCP server \`${config.name}\` offers two tools named \`${tool.name}\` once made valid for the model`, { hint: "Leave one out with `allowed_tools`." });
      }
      seen.add(tool.name);
    }
    return tools;
  }

  /** The live connections (for diagnostics and tests). */
  get connections(): McpConnection[] {
    return [...this.#connections.values()].map((entry) => entry.connection);
  }

  /** Close every connection and wait until every server process has exited. Safe to call more than once. */
  async closeAll(): Promise<void> {
    const entries = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.all(entries.map((entry) => entry.connection.close()));
  }
}

/** One connection per distinct server: the same name, command line, environment, or URL and headers. */
function connectionKey(config: McpServerConfig): string {
  return JSON.stringify([config.name, config.command ?? null, config.args ?? [], config.env ?? {}, config.url ?? null, config.headers ?? {}, config.bearer_token_env ?? null, config.oauth ?? null, config.transport ?? null]);
}
