import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { FunctionCall } from "../../tools/FunctionCall.js";
import { onRequest } from "./onRequest.js";
import { sdkServer } from "./sdkServer.js";
import type { ServedPackage } from "./ServedPackage.js";
import { mcpToolContext, type ConnectionState } from "./mcpToolContext.js";
import { toCallToolResult } from "./toCallToolResult.js";
import { toMcpTool } from "./toMcpTool.js";


/** `tools/list`, `tools/call` and `logging/setLevel` (the level of the tools' log messages) on one connection. */
export function registerTools(server: Server, served: ServedPackage, state: ConnectionState): void {
  const { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, SetLevelRequestSchema } = sdkServer();
  const listed = [...served.tools.values()].map(toMcpTool);
  onRequest(server, ListToolsRequestSchema, () => ({ tools: listed }));
  onRequest(server, CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params;
    const tool = served.tools.get(name);
    // Not a result for the model: the client asked for something that does not exist (MCP: invalid params).
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}; the tools are: ${[...served.tools.keys()].join(", ")}`);
    const call = new FunctionCall({ name, arguments: request.params.arguments ?? {} });
    try {
      await tool.call(call, mcpToolContext({ server, extra, state, toolName: name, cwd: served.cwd }), { validate: "inputSchema" });
    } catch (error) {
      // call() throws only when the tool cannot run at all (an unbound declaration, a broken schema).
      const message = error instanceof Error ? error.message : String(error);
      return { content: [{ type: "text", text: `Error: ${message}` }], isError: true };
    }
    return toCallToolResult(call);
  });
  // The SDK keeps the level per session id; a connection here is one session, so it is kept with the connection.
  onRequest(server, SetLevelRequestSchema, (request) => {
    state.logLevel = request.params.level;
    return {};
  });
}
