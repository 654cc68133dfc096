import { StdioClientTransport, type StdioServerParameters } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerConfig } from "../config/TacticConfig.js";
import { StderrTail } from "./StderrTail.js";

/** A transport to one server, and what lllm needs to watch it. */
export interface ServerTransport {
  transport: Transport;
  /** Set for stdio servers, whose stderr is kept to explain failures. */
  stderr?: StderrTail;
  kind: "stdio" | "http";
}

/**
 * The SDK's stdio transport, reporting the pid of the process it spawns: lllm tracks every server process so
 * that none outlives it (see `childProcesses`).
 */
class TrackedStdioClientTransport extends StdioClientTransport {
  constructor(
    parameters: StdioServerParameters,
    private readonly onSpawn: (pid: number) => void,
  ) {
    super(parameters);
  }

  override async start(): Promise<void> {
    await super.start();
    if (this.pid !== null) this.onSpawn(this.pid);
  }
}

/**
 * The transport a config asks for: `command` starts a local server over stdio, `url` connects over Streamable
 * HTTP with the config's headers. A stdio server gets the SDK's default environment (HOME, PATH, SHELL, TERM,
 * USER, LOGNAME) plus the config's `env`, never the whole environment of lllm: API keys in the host's
 * environment stay out of servers that were not given them.
 */
export function createTransport(config: McpServerConfig, options: { cwd?: string | undefined; onSpawn: (pid: number) => void }): ServerTransport {
  if (config.url !== undefined) {
    const transport = new StreamableHTTPClientTransport(new URL(config.url), config.headers ? { requestInit: { headers: config.headers } } : undefined);
    return { transport, kind: "http" };
  }
  const transport = new TrackedStdioClientTransport(
    {
      command: config.command!,
      args: config.args ?? [],
      ...(config.env ? { env: config.env } : {}),
      ...(options.cwd ? { cwd: options.cwd } : {}),
      stderr: "pipe",
    },
    options.onSpawn,
  );
  return { transport, stderr: new StderrTail(transport.stderr), kind: "stdio" };
}

/** How a server is started or reached, for messages: the command line or the URL. */
export function describeServer(config: McpServerConfig): string {
  if (config.url !== undefined) return config.url;
  return [config.command ?? "", ...(config.args ?? [])].map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : JSON.stringify(part))).join(" ");
}
