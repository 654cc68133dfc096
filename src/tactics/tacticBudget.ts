import { ConfigError, formatLocation, type ConfigProblem, type RunLimitName, type SourceLocation } from "../errors.js";
import type { DataPath } from "../config/SourceDocument.js";
import type { LoadedTactic } from "../config/index.js";
import { modelChain } from "../config/index.js";
import { hasLimits, limitsFromConfig, RunBudget, type LimitSource, type RunLimits } from "../limits/index.js";
import { PriceTable } from "../providers/PriceTable.js";
import type { TacticTree } from "./TacticTree.js";

const FLAGS: Record<RunLimitName, string> = { max_cost: "--max-cost", max_tokens: "--max-tokens", max_tool_calls: "--max-tool-calls", max_duration: "--max-duration" };
const KEYS: Record<RunLimitName, keyof RunLimits> = { max_cost: "maxCost", max_tokens: "maxTokens", max_tool_calls: "maxToolCalls", max_duration: "maxDuration" };

/** Where each limit of a tactic was set: `limits.max_cost of research.yaml:4:13`. */
export function tacticLimitSource(prepared: TacticTree): LimitSource {
  return (name) => {
    const where = prepared.tactic.locate(["limits", name]);
    return `limits.${name} of ${where ? formatLocation(where) : prepared.tactic.file}`;
  };
}

/**
 * The budget of a new run of `prepared`: its `limits:`, with `given` over them (the CLI's flags). Under a cost limit,
 * every model of the run tree must have a price: a model without one is an error now (exit 2), before any spend. A
 * resumed run starts it with the time its earlier attempts took (`earlierMs`).
 */
export function startRunBudget(prepared: TacticTree, given: RunLimits | undefined, resumed?: { earlierMs: number }): RunBudget {
  const own = limitsFromConfig(prepared.tactic.config.limits);
  const limits = { ...own, ...given };
  const fromTactic = tacticLimitSource(prepared);
  const source: LimitSource = (name) => (given?.[KEYS[name]] !== undefined ? FLAGS[name] : fromTactic(name));
  const prices = PriceTable.load(prepared.settings.prices);
  if (limits.maxCost !== undefined) {
    const problems = unpricedModels(prepared, prices, source("max_cost"));
    if (problems.length > 0) throw ConfigError.fromProblems("limit_unpriced_model", problems);
  }
  return RunBudget.start({ ...(hasLimits(limits) ? { limits } : {}), prices, source, ...(resumed ? { spentBefore: { durationMs: resumed.earlierMs } } : {}) });
}

/** The scope of one call of a tactic used as a tool (`tool`): its spend counted for the tool, its own limits checked too. */
export function nestedRunBudget(parent: RunBudget, nested: TacticTree, tool: string): RunBudget {
  const limits = limitsFromConfig(nested.tactic.config.limits);
  return parent.child({ tool, ...(hasLimits(limits) ? { limits, source: tacticLimitSource(nested) } : {}) });
}

/**
 * A problem for each model of `prepared`'s run tree (its agents and their fallbacks, and those of every tactic it
 * uses as a tool) that has no price, at the place it is named. A `scripted:` model replays turns and costs nothing.
 */
export function unpricedModels(prepared: TacticTree, prices: PriceTable, limit: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const seen = new Set<string>();
  for (const tactic of runTree(prepared)) {
    tactic.agents.forEach((agent, index) => {
      modelChain(agent.config).forEach((model, position) => {
        if (model.startsWith("scripted:") || prices.priceOf(model) || seen.has(model)) return;
        seen.add(model);
        const where = modelLocation(tactic.tactic, tactic.model, index, position) ?? (tactic.model !== undefined ? { file: "--model" } : undefined);
        problems.push({
          message: `model \`${model}\` has no known price, so ${limit} cannot count what it costs`,
          ...(where ? { location: where } : {}),
          hint: `Give its price in the project settings (.lllmrc.yaml): prices: {"${model}": {input: <$ per million prompt tokens>, output: <$ per million answer tokens>}}, or drop the cost limit.`,
        });
      });
    });
  }
  return problems;
}

/**
 * Where the `position`th model of an agent's chain is written: in a `model_name` list or in `fallback_models`, of the
 * agent's entry or of `global`. Undefined for `--model`, which is not in a file.
 */
export function modelLocation(tactic: LoadedTactic, modelOverride: string | undefined, agentIndex: number, position: number): SourceLocation | undefined {
  if (modelOverride !== undefined) return undefined;
  const own = tactic.config.agent_configs?.[agentIndex];
  const global = tactic.config.global;
  const modelBase: DataPath = own?.model_name !== undefined ? ["agent_configs", agentIndex] : ["global"];
  const written = own?.model_name ?? global?.model_name;
  const listed = Array.isArray(written) ? written.length : written === undefined ? 0 : 1;
  if (position < listed) return tactic.locate(Array.isArray(written) ? [...modelBase, "model_name", position] : [...modelBase, "model_name"]);
  const fallbackBase: DataPath = own?.fallback_models !== undefined ? ["agent_configs", agentIndex] : ["global"];
  return tactic.locate([...fallbackBase, "fallback_models", position - listed]) ?? tactic.locateAgent(agentIndex, ["model_name"]);
}

/** `prepared` and every tactic it uses as a tool, each once. */
export function runTree(prepared: TacticTree): TacticTree[] {
  const tree: TacticTree[] = [];
  const visit = (tactic: TacticTree): void => {
    if (tree.includes(tactic)) return;
    tree.push(tactic);
    for (const agent of tactic.agents) {
      for (const capability of agent.capabilities) {
        const nested = capability.kind === "tactic" ? tactic.nested.get(capability.entry.file) : undefined;
        if (nested) visit(nested);
      }
    }
  };
  visit(prepared);
  return tree;
}
