import { ToolError, type LllmErrorOptions } from "../errors.js";

/** The fields of an `McpToolError`. */
export interface McpToolErrorOptions extends LllmErrorOptions {
  /** The `name` of the server's configuration. */
  server: string;
  /** The tool's name on the server (not the prefixed name the model sees). */
  tool: string;
  /**
   * The error's code as the server gave it: the `code` of a `{"error": {"code", "message"}}` envelope, the
   * name of a JSON-RPC code the SDK reported (`INVALID_PARAMS` for `MCP error -32602: …`), or `TOOL_ERROR`.
   */
  mcpCode: string;
  /** The server's message without any code prefix. */
  mcpMessage: string;
}

/**
 * A tool of an MCP server answered with an error result (`isError: true`, or an error envelope). `message` is
 * the server's text, so the agent loop shows the model `Error: <text>`; code-action bridges raise
 * `MCPToolError: <mcpCode>: <mcpMessage>` in the program from the typed fields (seed 002).
 */
export class McpToolError extends ToolError {
  readonly server: string;
  readonly tool: string;
  readonly mcpCode: string;
  readonly mcpMessage: string;

  constructor(message: string, options: McpToolErrorOptions) {
    super("mcp_tool_error", message, options);
    this.server = options.server;
    this.tool = options.tool;
    this.mcpCode = options.mcpCode;
    this.mcpMessage = options.mcpMessage;
  }
}
