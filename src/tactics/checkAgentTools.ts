import type { ConfigProblem, SourceLocation } from "../errors.js";
import { didYouMean } from "../util/closest.js";

/** The prefix of a `tools:` entry that names a remote A2A agent by its URL: `a2a:http://127.0.0.1:8080`. */
export const A2A_TOOL_PREFIX = "a2a:";

/** The prefix of a `tools:` entry that names another agent of the same tactic: `agent:summarizer`. */
export const AGENT_TOOL_PREFIX = "agent:";

/** An agent of the tactic offered as a tool to another (`agent:<name>` in its `tools:`). */
export interface AgentToolRef {
  /** The agent the tool runs. */
  agent: string;
  where?: SourceLocation;
}

/**
 * Problems of the agents used as tools: an entry naming no agent of the tactic, and a cycle (a calls b calls a,
 * or an agent listing itself), which would recurse until a limit stopped it.
 */
export function checkAgentTools(agents: ReadonlyArray<{ name: string; agentTools: readonly AgentToolRef[] }>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const names = agents.map((agent) => agent.name);
  const byName = new Map(agents.map((agent) => [agent.name, agent]));
  for (const agent of agents) {
    for (const ref of agent.agentTools) {
      if (byName.has(ref.agent)) continue;
      const suggestion = didYouMean(ref.agent, names);
      problems.push({
        message: `\`${AGENT_TOOL_PREFIX}${ref.agent}\` in the tools of agent \`${agent.name}\` names no agent of this tactic`,
        ...(ref.where ? { location: ref.where } : {}),
        hint: suggestion || `The agents are ${names.map((name) => `\`${name}\``).join(", ")}; \`agent:<name>\` names one of them.`,
      });
    }
  }
  // A depth-first walk: an edge back to an agent on the current path closes a cycle.
  const reported = new Set<string>();
  const walk = (name: string, path: string[]): void => {
    for (const ref of byName.get(name)?.agentTools ?? []) {
      const back = path.indexOf(ref.agent);
      if (back >= 0) {
        const cycle = [...path.slice(back), ref.agent];
        const key = [...cycle].slice(0, -1).sort().join(",");
        if (reported.has(key)) continue;
        reported.add(key);
        problems.push({
          message: `agents used as tools call each other in a cycle: ${cycle.map((item) => `\`${item}\``).join(" calls ")}`,
          ...(ref.where ? { location: ref.where } : {}),
          hint: "An agent used as a tool runs to completion inside its caller: remove one `agent:` entry of the cycle (a `global.tools` list is given to every agent, the called one too).",
        });
        continue;
      }
      if (byName.has(ref.agent)) walk(ref.agent, [...path, ref.agent]);
    }
  };
  for (const agent of agents) walk(agent.name, [agent.name]);
  return problems;
}

/** `names` and every agent they can reach through `agent:` tools: the agents a run must build. */
export function withAgentTools(names: ReadonlySet<string>, agents: ReadonlyArray<{ name: string; agentTools: readonly AgentToolRef[] }>): Set<string> {
  const byName = new Map(agents.map((agent) => [agent.name, agent]));
  const reached = new Set<string>();
  const visit = (name: string): void => {
    if (reached.has(name)) return;
    reached.add(name);
    for (const ref of byName.get(name)?.agentTools ?? []) visit(ref.agent);
  };
  for (const name of names) visit(name);
  return reached;
}
