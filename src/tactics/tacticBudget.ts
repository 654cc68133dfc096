import { ConfigError, type RunLimitName } from "../errors.js";
import { hasLimits, limitsFromConfig, RunBudget, type LimitSource, type RunLimits } from "../limits/index.js";
import { PriceTable } from "../providers/PriceTable.js";
import type { TacticTree } from "./TacticTree.js";
import { tacticLimitSource } from "./tacticLimitSource.js";
import { unpricedModels } from "./unpricedModels.js";

const FLAGS: Record<RunLimitName, string> = { max_cost: "--max-cost", max_tokens: "--max-tokens", max_tool_calls: "--max-tool-calls", max_duration: "--max-duration" };
const KEYS: Record<RunLimitName, keyof RunLimits> = { max_cost: "maxCost", max_tokens: "maxTokens", max_tool_calls: "maxToolCalls", max_duration: "maxDuration" };

/**
 * The budget of a new run of `prepared`: its `limits:`, with `given` over them (the CLI's flags, or where
 * `givenSources` says they were set). Under a cost limit,
 * every model of the run tree must have a price: a model without one is an error now (exit 2), before any spend. A
 * resumed run starts it with the time its earlier attempts took (`earlierMs`).
 */
export function startRunBudget(prepared: TacticTree, given: RunLimits | undefined, resumed?: { earlierMs: number }, givenSources: Partial<Record<RunLimitName, string>> = {}): RunBudget {
  const own = limitsFromConfig(prepared.tactic.config.limits);
  const limits = { ...own, ...given };
  const fromTactic = tacticLimitSource(prepared);
  // A given limit that is the tactic's own value (a server passes the lowest of its limits, the tactic's among them) is the tactic's.
  const source: LimitSource = (name) => givenSources[name] ?? (given?.[KEYS[name]] !== undefined && given[KEYS[name]] !== own[KEYS[name]] ? FLAGS[name] : fromTactic(name));
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
