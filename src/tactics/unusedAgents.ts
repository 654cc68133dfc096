import { withAgentTools } from "./checkAgentTools.js";
import { patternFor } from "./patterns/patternFor.js";
import type { PreparedTactic } from "./prepareTactic.js";

/**
 * The agents of a tactic that no run of it uses: not run by its pattern (the `agent` pattern runs one agent, a
 * pipeline its steps' agents) and not reached as a tool (`agent:<name>`) from one that is. Most likely a missing
 * `agent:` entry or a leftover; `lllm validate` warns of each, in a tactic that uses agents as tools.
 */
export function unusedAgents(prepared: PreparedTactic): string[] {
  // Without any `agent:` tool, agents besides the pattern's are a tactic's own business (code may use them, a
  // `base:` may share them): only a tactic that uses agents as tools is likely to have missed one.
  if (!prepared.agents.some((agent) => agent.agentTools.length > 0)) return [];
  const used = withAgentTools(patternFor(prepared).agentsUsed(prepared), prepared.agents);
  return prepared.agents.filter((agent) => !used.has(agent.name)).map((agent) => agent.name);
}
