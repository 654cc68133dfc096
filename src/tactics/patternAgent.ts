import type { Agent } from "../agent/index.js";
import { ConfigError } from "../errors.js";
import type { PreparedTactic } from "./prepareTactic.js";

/** The name of the agent a single-agent pattern runs (agent, notebook, code-action): `agent:`, else the first one. */
export function patternAgentName(prepared: PreparedTactic): string | undefined {
  return prepared.tactic.config.agent ?? prepared.agents[0]?.name;
}

/** The built agent a single-agent pattern runs; a `tactic_no_agent` ConfigError when there is none. */
export function patternAgent(prepared: PreparedTactic, agents: ReadonlyMap<string, Agent>): Agent {
  const name = patternAgentName(prepared);
  const agent = name !== undefined ? agents.get(name) : undefined;
  if (!agent) throw new ConfigError("tactic_no_agent", "the tactic has no agent to run", { location: { file: prepared.tactic.file }, hint: "Add an entry to agent_configs." });
  return agent;
}

/** The agents a single-agent pattern uses: its one agent, if any. */
export function singleAgent(prepared: PreparedTactic): Set<string> {
  const name = patternAgentName(prepared);
  return new Set(name !== undefined ? [name] : []);
}
