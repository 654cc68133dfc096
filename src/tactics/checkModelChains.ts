import { modelChain, type LoadedTactic } from "../config/index.js";
import { ConfigError, type ConfigProblem } from "../errors.js";
import { checkModelName } from "../providers/checkModelName.js";
import { didYouMean } from "../util/closest.js";
import type { TacticTree } from "./TacticTree.js";
import { modelLocation } from "./modelLocation.js";

/**
 * Every model of every agent's chain (`model_name`, a list of them, `fallback_models`) is a name `createModel`
 * can route: an unknown provider prefix is reported at its place in the file, before anything runs.
 */
export function checkModelChains(tactic: LoadedTactic, agents: TacticTree["agents"], modelOverride: string | undefined): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const customServer = (process.env["OPENAI_BASE_URL"] ?? "").trim() !== "";
  agents.forEach((agent, index) => {
    modelChain(agent.config).forEach((model, position) => {
      // The agent's base_url is its first model's (see chainMember): a fallback's name must route on its own.
      const customBaseURL = customServer || (position === 0 && typeof agent.config.invoker_config?.base_url === "string");
      try {
        checkModelName(model, { customBaseURL });
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        const where = modelLocation(tactic, modelOverride, index, position);
        problems.push({ message: `agent \`${agent.name}\`: ${error.message}`, ...(where ? { location: where } : { location: { file: "--model" } }), ...(error.hint ? { hint: error.hint } : {}) });
      }
    });
  });
  return problems;
}

/** Tool names lllm adds itself: the proxies' interpreter and docs, and the tool chain. */
const BUILT_IN_TOOLS = ["run_python", "query_api_doc", "tool_chain"];

/**
 * Each name in `require_approval` must be a tool some agent of the tactic is offered: a misspelt name would leave
 * the tool it meant running without a question. The tools of MCP servers are known only once the servers start, so
 * a tactic with servers is checked when its run starts them (`unofferedApprovals`, from buildAgents).
 */
export function checkRequireApproval(prepared: TacticTree): ConfigProblem[] {
  const { tactic, agents } = prepared;
  if ((tactic.config.require_approval ?? []).length === 0 || hasMcpServers(prepared)) return [];
  return unofferedApprovals(tactic, localToolNames(prepared, agents));
}

/** Whether the tactic or one of its agents names MCP servers (whose tools are known once they start). */
export function hasMcpServers(prepared: TacticTree, agents: TacticTree["agents"] = prepared.agents): boolean {
  return (prepared.tactic.config.mcp_servers ?? []).length > 0 || agents.some((agent) => (agent.config.mcp_servers ?? []).length > 0);
}

/** The names of the tools `agents` are offered that are known before anything starts (all but MCP servers' tools). */
export function localToolNames(prepared: TacticTree, agents: TacticTree["agents"]): Set<string> {
  const known = new Set<string>(BUILT_IN_TOOLS);
  for (const agent of agents) {
    for (const bound of agent.tools) known.add(bound.tool.name);
    for (const ref of agent.agentTools) known.add(ref.agent);
    for (const capability of agent.capabilities) {
      if (capability.kind !== "tactic") continue;
      known.add(capability.member ?? prepared.nested.get(capability.entry.file)?.tactic.config.name ?? capability.entry.key);
    }
  }
  return known;
}

/** The names of `require_approval` that are none of the `known` tools, as problems (with the nearest name). */
export function unofferedApprovals(tactic: LoadedTactic, known: ReadonlySet<string>): ConfigProblem[] {
  const names = tactic.config.require_approval ?? [];
  const problems: ConfigProblem[] = [];
  names.forEach((name, index) => {
    if (known.has(name)) return;
    const suggestion = didYouMean(name, [...known]);
    const where = tactic.locate(["require_approval", index]);
    problems.push({
      message: `require_approval names \`${name}\`, which no agent of this tactic is offered`,
      ...(where ? { location: where } : { location: { file: tactic.file } }),
      hint: suggestion || `The agents' tools are ${[...known].filter((tool) => !BUILT_IN_TOOLS.includes(tool)).map((tool) => `\`${tool}\``).join(", ") || "none"}; name a tool as the model sees it.`,
    });
  });
  return problems;
}
