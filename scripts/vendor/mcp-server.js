// The MCP SDK's server side as lllm's MCP server uses it (src/mcp/serve/sdkServer.ts), bundled by scripts/bundle.js
// into dist/vendor/mcp-server.cjs: from node_modules it was ~300 files (the SDK, zod four ways, ajv, its formats),
// which `lllm mcp serve` resolved and compiled at every session's start.
export { Server } from "@modelcontextprotocol/sdk/server/index.js";
export { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
export * from "@modelcontextprotocol/sdk/types.js";
// The zod the SDK's schemas are made with, for the schemas lllm hands it (onRequest.ts).
export * as z from "zod/v4";
