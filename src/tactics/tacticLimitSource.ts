import { formatLocation } from "../errors.js";
import type { LimitSource } from "../limits/index.js";
import type { TacticTree } from "./TacticTree.js";

// Apart from tacticBudget.ts (which starts budgets, and loads limits/ to do so): `lllm validate` checks limits
// without starting one.

/** Where each limit of a tactic was set: `limits.max_cost of research.yaml:4:13`. */
export function tacticLimitSource(prepared: TacticTree): LimitSource {
  return (name) => {
    const where = prepared.tactic.locate(["limits", name]);
    return `limits.${name} of ${where ? formatLocation(where) : prepared.tactic.file}`;
  };
}
