import { patternAgentName, singleAgent } from "../patternAgent.js";
import type { Pattern, PatternContext, PatternOutcome } from "./Pattern.js";

/** `tactic_type: notebook` (seed 000, Step 16): see notebookPattern.ts; the kernel code loads only for notebooks. */
export const notebookPattern: Pattern = {
  agentsUsed: singleAgent,
  async run({ prepared, agents, vars, options, scope, proxyManagers, notebookCells }: PatternContext): Promise<PatternOutcome> {
    const { runNotebookPattern } = await import("../notebookPattern.js");
    const proxies = proxyManagers.get(patternAgentName(prepared) ?? "");
    return { output: (await runNotebookPattern(prepared, agents, vars, { ...options, scope, proxies, cells: notebookCells })).output };
  },
};
