import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerConfig } from "../config/TacticConfig.js";
import { registerServerEnvSecrets } from "./registerServerEnvSecrets.js";
import { StderrTail } from "./StderrTail.js";
import { StdioProcessTransport } from "./StdioProcessTransport.js";

/** A transport to one server, and what lllm needs to watch it. */
export interface ServerTransport {
  transport: Transport;
  /** Set for stdio servers, whose stderr is kept to explain failures. */
  stderr?: StderrTail;
  /** Set for stdio servers: the process, in its own process group. */
  process?: StdioProcessTransport;
  kind: "stdio" | "http" | "sse";
}

/**
 * The stdio transport of a `command` config: the SDK's default environment (HOME, PATH, SHELL, TERM, USER,
 * LOGNAME) plus the config's `env`, never the whole environment of lllm: API keys in the host's environment stay
 * out of servers that were not given them. The `env` values are secrets from then on (see `registerServerEnvSecrets`).
 * Servers reached by `url` get theirs from `createHttpTransport`.
 */
export function createTransport(config: McpServerConfig, options: { cwd?: string | undefined }): ServerTransport {
  registerServerEnvSecrets(config.env);
  const transport = new StdioProcessTransport({ command: config.command!, args: config.args ?? [], env: config.env, cwd: options.cwd });
  return { transport, stderr: new StderrTail(transport.stderr), process: transport, kind: "stdio" };
}

/** How a server is started or reached, for messages: the command line or the URL. */
export function describeServer(config: McpServerConfig): string {
  if (config.url !== undefined) return config.url;
  return [config.command ?? "", ...(config.args ?? [])].map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : JSON.stringify(part))).join(" ");
}
