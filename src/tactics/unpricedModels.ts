import { modelChain } from "../config/index.js";
import type { ConfigProblem } from "../errors.js";
import type { PriceTable } from "../providers/PriceTable.js";
import type { TacticTree } from "./TacticTree.js";
import { modelLocation } from "./modelLocation.js";
import { runTree } from "./runTree.js";

// Apart from tacticBudget.ts (which starts budgets, and loads limits/ to do so): `lllm validate` checks limits
// without starting one.

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
        if (prices.priceOf(model) || seen.has(model)) return;
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
