import { ConfigError } from "../errors.js";
import { isPlainObject, kindOf } from "../tools/JsonSchema.js";

/** Per-tool approval, the object form of `require_approval` (OpenAI's shape). */
export interface McpApprovalFilter {
  always?: { tool_names?: string[] };
  never?: { tool_names?: string[] };
}

/** When the provider must ask before calling a tool of the server. */
export type McpRequireApproval = "never" | "always" | McpApprovalFilter;

/** The fields of a provider-side MCP declaration, in the config's snake_case (seed 000, Step 9). */
export interface McpOptions {
  /** The name the provider shows for the server. */
  server_label: string;
  /** The server's URL; the provider connects to it, so it must be reachable from the provider. */
  server_url: string;
  /** Default `"never"`, as in LLLM. */
  require_approval?: McpRequireApproval;
  /** Only these tools are offered to the model; all when omitted. */
  allowed_tools?: string[];
}

/** The `{"type": "mcp", …}` tool sent to the provider. */
export interface McpToolDeclaration {
  type: "mcp";
  server_label: string;
  server_url: string;
  require_approval: McpRequireApproval;
  allowed_tools?: string[];
}

/**
 * A remote MCP server the provider calls itself (seed 000, Step 9): lllm only passes the declaration along as a
 * `{"type": "mcp", …}` tool. OpenAI accepts it on the Responses API only (`api_type: response`; see
 * `assertProviderMcpSupported`). For servers lllm connects to itself, use `mcp_servers` and `McpConnections`.
 */
export class MCP {
  readonly server_label: string;
  readonly server_url: string;
  readonly require_approval: McpRequireApproval;
  readonly allowed_tools: string[] | undefined;

  constructor(options: McpOptions) {
    const fail = (message: string, hint: string): never => {
      throw new ConfigError("mcp_invalid", `MCP declaration${isPlainObject(options) && typeof options.server_label === "string" ? ` \`${options.server_label}\`` : ""}: ${message}`, { hint });
    };
    if (!isPlainObject(options)) fail(`expected an object, got ${kindOf(options)}`, "Write {server_label, server_url, require_approval, allowed_tools}.");
    if (typeof options.server_label !== "string" || options.server_label === "") fail("needs a `server_label` (a string)", "e.g. server_label: docs");
    if (typeof options.server_url !== "string" || !/^https?:\/\//.test(options.server_url)) fail(`\`server_url\` must be an http(s) URL, got ${JSON.stringify(options.server_url) ?? kindOf(options.server_url)}`, "e.g. server_url: https://example.com/mcp (the provider must be able to reach it)");
    const approval = options.require_approval ?? "never";
    if (approval !== "never" && approval !== "always" && !isApprovalFilter(approval)) {
      fail(`\`require_approval\` must be "never", "always" or {always: {tool_names: [...]}, never: {tool_names: [...]}}, got ${JSON.stringify(approval)}`, 'e.g. require_approval: never');
    }
    if (options.allowed_tools !== undefined && (!Array.isArray(options.allowed_tools) || options.allowed_tools.some((name) => typeof name !== "string"))) {
      fail("`allowed_tools` must be a list of tool names", "e.g. allowed_tools: [search, fetch_url]");
    }
    this.server_label = options.server_label;
    this.server_url = options.server_url;
    this.require_approval = approval;
    this.allowed_tools = options.allowed_tools;
  }

  /**
   * The tool for the provider's request. `allowed_tools` is left out when not given or empty, as LLLM does:
   * the provider then offers every tool of the server.
   */
  toTool(): McpToolDeclaration {
    return {
      type: "mcp",
      server_label: this.server_label,
      server_url: this.server_url,
      require_approval: this.require_approval,
      ...(this.allowed_tools && this.allowed_tools.length > 0 ? { allowed_tools: [...this.allowed_tools] } : {}),
    };
  }
}

function isApprovalFilter(value: unknown): value is McpApprovalFilter {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  if (keys.length === 0 || keys.some((key) => key !== "always" && key !== "never")) return false;
  return keys.every((key) => {
    const entry = value[key];
    return isPlainObject(entry) && (entry.tool_names === undefined || (Array.isArray(entry.tool_names) && entry.tool_names.every((name) => typeof name === "string")));
  });
}
