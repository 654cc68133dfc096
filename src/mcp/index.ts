// MCP: servers as tool sources (stdio and Streamable HTTP), provider-side declarations, and serving a package.
export { McpConnections, DEFAULT_MCP_CALL_TIMEOUT_MS, DEFAULT_MCP_START_TIMEOUT_MS, type McpConnectionsOptions } from "./McpConnections.js";
export { McpConnection, type McpToolInfo } from "./McpConnection.js";
export { McpToolError, type McpToolErrorOptions } from "./McpToolError.js";
export { decodeToolResult, type DecodedToolResult, type McpCallResult } from "./decodeToolResult.js";
export { mcpToolToFunction, type McpToolOptions } from "./mcpToolToFunction.js";
export { selectTools } from "./selectTools.js";
export { checkServerConfig } from "./checkServerConfig.js";
export { describeServer } from "./createTransport.js";
export { killTrackedChildren } from "./childProcesses.js";
export { parseServerSpec, type ServerSpecOptions } from "./parseServerSpec.js";
export { splitCommandLine } from "./splitCommandLine.js";
export { MCP, type McpOptions, type McpToolDeclaration, type McpRequireApproval, type McpApprovalFilter } from "./MCP.js";
export { assertProviderMcpSupported } from "../providers/assertProviderMcpSupported.js";
export { createPackageServer, loadServedPackage, serverFor, type PackageServerOptions, type ServedPackage } from "./serve/createPackageServer.js";
export { packageTools, type PackageTools } from "./serve/packageTools.js";
export { toCallToolResult } from "./serve/toCallToolResult.js";
export { serveStdio } from "./serve/serveStdio.js";
export type { McpServerConfig } from "../config/TacticConfig.js";
