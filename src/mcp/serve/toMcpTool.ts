import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { FunctionTool } from "../../tools/FunctionTool.js";

/**
 * A FunctionTool as MCP lists it: the input schema as its author wrote it (`publishedSchema`: `$schema`, `$defs`,
 * `default` kept, no `required` added to a schema without one), the title, the output schema, and the behaviour
 * hints of its declaration, `readOnlyHint` following `sideEffects` unless the annotations say.
 */
export function toMcpTool(tool: FunctionTool): Tool {
  const annotations = { ...(tool.sideEffects === undefined ? {} : { readOnlyHint: !tool.sideEffects }), ...(tool.annotations ?? {}) };
  return {
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    description: tool.description,
    inputSchema: tool.publishedSchema as Tool["inputSchema"],
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema as Tool["outputSchema"] } : {}),
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
  };
}
