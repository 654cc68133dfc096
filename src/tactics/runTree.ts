import type { TacticTree } from "./TacticTree.js";

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
