import type { FunctionTool } from "../tools/index.js";

/**
 * The tools offered on a turn, by name (seed 000, Step 3): the agent's own tools (the system prompt's) plus the
 * turn prompt's; on a name clash the turn's version wins; `agentTools: false` offers the turn's tools only.
 */
export function offeredTools(options: { agentTools: FunctionTool[]; turnTools: FunctionTool[]; includeAgentTools: boolean }): Map<string, FunctionTool> {
  // A Map, not an object: the model supplies the names looked up here, and `constructor` must not be a tool.
  const offered = new Map<string, FunctionTool>();
  if (options.includeAgentTools) for (const tool of options.agentTools) offered.set(tool.name, tool);
  for (const tool of options.turnTools) offered.set(tool.name, tool);
  return offered;
}
