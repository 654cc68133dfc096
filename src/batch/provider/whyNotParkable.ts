import { modelChain } from "../../config/TacticConfig.js";
import type { PreparedTactic } from "../../tactics/prepareTactic.js";

/**
 * Why the items of a tactic cannot wait for their provider batch jobs as data (parked, and run again from their
 * start when the answer comes), or undefined when they can. Running an item again replays its answered model turns
 * and its tools' kept results; that gives the same run only when all its state is in its dialog: one agent's tool
 * loop, or a pipeline of them, with tools that are plain calls. A tool with state of its own between calls (a Python
 * kernel, a sandboxed program, an MCP server's session), or a tactic or agent used as a tool, is not replayed that
 * way, nor is a model called live (no batch API; a fallback chain's other models): such items wait in memory
 * instead, a window of them at a time. (Models without a batch API are checked by the caller, which knows them.)
 */
export function whyNotParkable(prepared: PreparedTactic): string | undefined {
  const type = prepared.tactic.config.tactic_type;
  if (type !== "agent" && type !== "pipeline") return `its tactic_type is \`${type}\``;
  if ((prepared.tactic.config.mcp_servers ?? []).length > 0) return "it uses MCP servers";
  for (const agent of prepared.agents) {
    const { config } = agent;
    if ((config.mcp_servers ?? []).length > 0) return `agent \`${agent.name}\` uses MCP servers`;
    if (config.proxy !== undefined || config.tool_chain) return `agent \`${agent.name}\` runs programs (a proxy block or tool_chain)`;
    const composite = agent.capabilities.find((capability) => capability.kind === "tactic" || capability.kind === "proxy");
    if (composite) return `agent \`${agent.name}\` uses \`${composite.ref}\``;
    if (agent.agentTools.length > 0) return `agent \`${agent.name}\` uses agents as tools`;
    if (modelChain(config).length > 1) return `agent \`${agent.name}\` has fallback models`;
    const unbound = agent.tools.find((entry) => entry.tool.isDeclaration);
    if (unbound) return `agent \`${agent.name}\`'s tool \`${unbound.tool.name}\` is bound only when the run starts`;
  }
  return undefined;
}
