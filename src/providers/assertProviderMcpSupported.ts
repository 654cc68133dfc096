import { ConfigError } from "../errors.js";

/**
 * Provider-side MCP servers (`MCP`, `{"type": "mcp"}` tools) exist only on the Responses API; the chat
 * completions API would reject the request. Fail before sending anything, saying what to set.
 */
export function assertProviderMcpSupported(apiType: string | undefined, context: { agent?: string; serverLabels?: string[] } = {}): void {
  if (apiType === "response") return;
  const servers = context.serverLabels && context.serverLabels.length > 0 ? ` (${context.serverLabels.map((label) => `\`${label}\``).join(", ")})` : "";
  const agent = context.agent ? `agent \`${context.agent}\`` : "the agent";
  throw new ConfigError("mcp_needs_responses_api", `provider-side MCP servers${servers} need the Responses API, but ${agent} uses api_type ${apiType ?? "completion"}`, {
    hint: "Set `api_type: response` on the agent (or under `global`), or connect to the server from lllm with `mcp_servers` instead.",
  });
}
