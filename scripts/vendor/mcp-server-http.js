// The MCP SDK's Streamable HTTP transport, for `lllm serve` and `lllm mcp serve --http` (src/mcp/serve/sdkServer.ts):
// a file of its own, as it sets up Node's fetch classes (undici) when loaded, which the stdio server never needs.
export { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
