import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { requireNow } from "../util/lazyModule.js";
import type { Registry } from "../registry/Registry.js";
import { FunctionCall } from "../tools/FunctionCall.js";
import type { FunctionTool } from "../tools/FunctionTool.js";
import { packageTools } from "./packageTools.js";
import { toCallToolResult } from "./toCallToolResult.js";

/** Options of `createPackageServer`. */
export interface PackageServerOptions {
  /**
   * More tools to serve next to the package's own: the seam for tactics served as tools (build them with
   * `tacticAsFunction`). A name clash with a package tool keeps the package tool.
   */
  extraTools?: FunctionTool[];
  /** The working directory tools run in. Default: this process's. */
  cwd?: string;
}

/**
 * An MCP server (the SDK's low-level `Server`, not connected yet) that serves a package's tools: `tools/list`
 * gives each tool's JSON Schema unchanged as `inputSchema` (exactly `toTool().function.parameters`), and
 * `tools/call` runs `tool.call()` as the agent loop would. Whatever goes wrong in a call is an `isError` result
 * for the client's model, never a protocol error. Connect it to a transport: `StdioServerTransport` for
 * `lllm mcp serve`, `InMemoryTransport` in tests.
 */
export function createPackageServer(registry: Registry, packageName: string, options: PackageServerOptions = {}): Server {
  const pkg = registry.packages.get(packageName);
  const { tools } = packageTools(registry, packageName);
  const byName = new Map<string, FunctionTool>();
  for (const tool of [...tools, ...(options.extraTools ?? [])]) if (!byName.has(tool.name)) byName.set(tool.name, tool);

  // The SDK is required here, synchronously, rather than imported at the top: `import "lllm"` must not load it.
  const { Server } = requireNow<typeof import("@modelcontextprotocol/sdk/server/index.js")>("@modelcontextprotocol/sdk/server/index.js");
  const { CallToolRequestSchema, ListToolsRequestSchema } = requireNow<typeof import("@modelcontextprotocol/sdk/types.js")>("@modelcontextprotocol/sdk/types.js");
  const server = new Server({ name: `lllm-${packageName}`, version: pkg?.manifest.version ?? "0.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...byName.values()].map(toMcpTool) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params;
    const tool = byName.get(name);
    if (!tool) {
      return { content: [{ type: "text", text: `Error: unknown tool \`${name}\`; the tools are: ${[...byName.keys()].join(", ")}` }], isError: true };
    }
    const call = new FunctionCall({ name, arguments: request.params.arguments ?? {} });
    try {
      await tool.call(call, { signal: extra.signal, cwd: options.cwd ?? process.cwd() });
    } catch (error) {
      // call() throws only when the tool cannot run at all (an unbound declaration, a broken schema).
      const message = error instanceof Error ? error.message : String(error);
      return { content: [{ type: "text", text: `Error: ${message}` }], isError: true };
    }
    return toCallToolResult(call);
  });
  return server;
}

/** A FunctionTool as an MCP tool: the schema the model sees, and the side-effect hint when the tool has one. */
function toMcpTool(tool: FunctionTool): Tool {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.toTool().function.parameters,
    ...(tool.sideEffects === undefined ? {} : { annotations: { readOnlyHint: !tool.sideEffects } }),
  };
}
