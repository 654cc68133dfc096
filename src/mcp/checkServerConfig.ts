import type { McpServerConfig } from "../config/TacticConfig.js";
import { ConfigError } from "../errors.js";
import { isPlainObject, kindOf } from "../tools/JsonSchema.js";

/**
 * Check an `mcp_servers` entry beyond what the tactic schema can say (configs also come from code and the CLI):
 * a name, exactly one of `command` (stdio) or `url` (Streamable HTTP), and string lists and maps where expected.
 */
export function checkServerConfig(config: McpServerConfig): McpServerConfig {
  const name = isPlainObject(config) && typeof config.name === "string" && config.name !== "" ? config.name : undefined;
  const where = name === undefined ? "an MCP server" : `MCP server \`${name}\``;
  const fail = (message: string, hint: string): never => {
    throw new ConfigError("mcp_server_invalid", `${where}: ${message}`, { hint });
  };
  if (!isPlainObject(config)) return fail(`the configuration must be an object, got ${kindOf(config)}`, "Write {name, command, args} or {name, url}.");
  if (name === undefined) fail("needs a `name`", "Name it, e.g. name: docs; messages and logs use it.");
  const hasCommand = config.command !== undefined;
  const hasUrl = config.url !== undefined;
  if (hasCommand === hasUrl) {
    fail(hasCommand ? "has both `command` and `url`" : "needs a `command` (a local server over stdio) or a `url` (a remote server over HTTP)", "Give `command` and `args` to start a local server, or `url` to connect to a running one.");
  }
  if (hasCommand && (typeof config.command !== "string" || config.command === "")) fail(`\`command\` must be a program name or path, got ${kindOf(config.command)}`, "e.g. command: npx, args: [-y, @modelcontextprotocol/server-filesystem, ./data]");
  if (hasUrl) {
    let url: URL | undefined;
    try {
      url = typeof config.url === "string" ? new URL(config.url) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) fail(`\`url\` must be an http(s) URL, got ${JSON.stringify(config.url)}`, "e.g. url: http://127.0.0.1:3000/mcp");
  }
  for (const key of ["args", "allowed_tools", "idempotent_tools"] as const) {
    const value = config[key];
    if (value !== undefined && (!Array.isArray(value) || value.some((item) => typeof item !== "string"))) fail(`\`${key}\` must be a list of strings`, `e.g. ${key}: [${key === "args" ? "server.js, --verbose" : "search, fetch"}]`);
  }
  for (const key of ["env", "headers"] as const) {
    const value = config[key];
    if (value !== undefined && (!isPlainObject(value) || Object.values(value).some((item) => typeof item !== "string"))) fail(`\`${key}\` must map names to strings`, `e.g. ${key}: {${key === "env" ? "API_KEY: abc" : "Authorization: Bearer abc"}}`);
  }
  if (config.prefix !== undefined && typeof config.prefix !== "string") fail(`\`prefix\` must be a string, got ${kindOf(config.prefix)}`, "e.g. prefix: docs_");
  return config;
}
