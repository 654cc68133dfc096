import { ConfigError } from "../../errors.js";
import { Prompt } from "../../prompts/index.js";
import type { Pattern, PatternContext, PatternOutcome } from "./Pattern.js";

/** `tactic_type: pipeline`: steps in order; each sees the input, the vars and the earlier steps' `as` names. */
export const pipelinePattern: Pattern = {
  agentsUsed: (prepared) => new Set((prepared.tactic.config.steps ?? []).map((step) => step.agent)),
  async run({ prepared, agents, vars, options }: PatternContext): Promise<PatternOutcome> {
    const steps = prepared.tactic.config.steps ?? [];
    let output: unknown;
    for (const [index, step] of steps.entries()) {
      const agent = agents.get(step.agent);
      if (!agent) throw new ConfigError("pipeline_unknown_agent", `pipeline step ${index + 1} names agent \`${step.agent}\`, which is not defined`, { location: prepared.tactic.locate(["steps", index, "agent"]) ?? { file: prepared.tactic.file } });
      const last = index === steps.length - 1;
      agent.open(`step-${index + 1}`, { promptArgs: vars });
      agent.receivePrompt(new Prompt({ path: `${prepared.tactic.config.name ?? "pipeline"}/step-${index + 1}`, prompt: step.prompt ?? "{input}" }), vars);
      const message = await agent.respond({ ...(options.signal ? { signal: options.signal } : {}), ...(last && options.onText ? { onText: options.onText } : {}) });
      output = message.content;
      if (step.as) vars[step.as] = output;
    }
    return { output };
  },
};
