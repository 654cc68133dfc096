import { PriceTable } from "../providers/PriceTable.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import { modelChain } from "../config/index.js";

/** A model of the tactic (nested tactics included) that the price table does not know, with the first agent using it. */
export interface UnpricedModel {
  model: string;
  agent: string;
}

/**
 * The models of a prepared tactic and of every tactic it uses as a tool that have no price (shipped table and the
 * project's `prices:`): a `--max-cost` cannot count their calls.
 */
export function unpricedModels(prepared: PreparedTactic): UnpricedModel[] {
  const table = PriceTable.load(prepared.settings.prices);
  const found = new Map<string, UnpricedModel>();
  for (const tactic of [prepared, ...prepared.nested.values()]) {
    for (const agent of tactic.agents) {
      // Every model of a fallback chain may answer, and be counted.
      for (const model of modelChain(agent.config)) {
        if (found.has(model) || table.priceOf(model) !== undefined) continue;
        found.set(model, { model, agent: agent.name });
      }
    }
  }
  return [...found.values()];
}
