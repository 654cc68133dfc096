import type { McpServerConfig } from "../config/TacticConfig.js";
import { ConfigError } from "../errors.js";
import { closest } from "../util/closest.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";
import type { McpToolInfo } from "./McpConnection.js";

/**
 * The tools of a server the config offers: all of them, or those in `allowed_tools` in that order. An allowed
 * tool the server does not have is a mistake in the config (a typo, a renamed tool): a ConfigError naming it and
 * listing what the server has, rather than an agent that silently lacks a tool.
 */
export function selectTools(tools: McpToolInfo[], config: McpServerConfig): McpToolInfo[] {
  if (config.allowed_tools === undefined) return tools;
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const missing = config.allowed_tools.filter((name) => !byName.has(name));
  if (missing.length > 0) {
    const names = tools.map((tool) => tool.name);
    // The names are the server's text: on one line, so that a line break in one cannot start a line of lllm's own.
    const shown = (name: string): string => escapeControlCharacters(name, { all: true });
    const suggestions = missing.flatMap((name) => closest(name, names).slice(0, 1).map((near) => `\`${name}\` -> \`${shown(near)}\``));
    throw new ConfigError(
      "mcp_tool_not_found",
      `MCP server \`${config.name}\` has no tool ${missing.map((name) => `\`${name}\``).join(", ")} (listed in allowed_tools); its tools are: ${names.length > 0 ? names.map(shown).join(", ") : "none"}`,
      { hint: suggestions.length > 0 ? `did you mean ${suggestions.join(", ")}?` : "Fix allowed_tools to name tools the server lists (`lllm mcp tools <server>` prints them)." },
    );
  }
  return [...new Set(config.allowed_tools)].map((name) => byName.get(name)!);
}
