import { loadTacticDefinition } from "../loadTacticDefinition.js";
import type { Pattern, PatternContext, PatternOutcome } from "./Pattern.js";

/** A tactic written in code (`tactic_type: pkg.tactics:name`): its `call` gets the input and fresh agents of every configured agent. */
export const codeTacticPattern: Pattern = {
  agentsUsed: (prepared) => new Set(prepared.agents.map((agent) => agent.name)),
  async run({ prepared, agents, vars, input, options }: PatternContext): Promise<PatternOutcome> {
    const entry = prepared.registry.resolveEntry("tactics", prepared.tactic.config.tactic_type);
    const definition = await loadTacticDefinition(entry.file);
    const output = await definition.call(input, {
      agents: Object.fromEntries(agents),
      vars,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onText ? { onText: options.onText } : {}),
    });
    return { output };
  },
};
