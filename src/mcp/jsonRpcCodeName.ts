/** Names of the JSON-RPC and MCP error codes, for `McpToolError.mcpCode` (a number means little to a program). */
const NAMES: Record<string, string> = {
  "-32700": "PARSE_ERROR",
  "-32600": "INVALID_REQUEST",
  "-32601": "METHOD_NOT_FOUND",
  "-32602": "INVALID_PARAMS",
  "-32603": "INTERNAL_ERROR",
  "-32000": "CONNECTION_CLOSED",
  "-32001": "REQUEST_TIMEOUT",
};

/** `INVALID_PARAMS` for -32602; an unknown code as its digits. */
export function jsonRpcCodeName(code: number | string): string {
  return NAMES[String(code)] ?? String(code);
}
