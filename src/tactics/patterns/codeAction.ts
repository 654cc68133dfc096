import { Prompt } from "../../prompts/index.js";
import { patternAgent, singleAgent } from "../patternAgent.js";
import type { Pattern, PatternContext, PatternOutcome } from "./Pattern.js";

/**
 * `tactic_type: code-action`: the tactic's agent (the first, or `agent:`) gets the tactic's prompt and writes
 * programs over its tools, with the tactic's `code_action` and `sandbox` settings. The code-action and sandbox
 * modules load only for such tactics.
 */
export const codeActionPattern: Pattern = {
  agentsUsed: singleAgent,
  async run({ prepared, agents, vars, options, artifacts }: PatternContext): Promise<PatternOutcome> {
    const [{ codeActionAgent, DEFAULT_CODE_ACTION, runCodeAction }, { programSandbox }] = await Promise.all([import("../../codeaction/index.js"), import("../programSandbox.js")]);
    const { config } = prepared.tactic;
    const agent = patternAgent(prepared, agents);
    // Checked before any model call: a run that cannot be isolated must not spend tokens first.
    const { isolation, maxOutputChars } = await programSandbox(prepared, "code-action");
    const { agent: programmer, tools } = codeActionAgent(agent);
    const task = new Prompt({ path: `${config.name ?? "tactic"}/input`, prompt: config.prompt }).format(vars);
    const result = await runCodeAction({
      agent: programmer,
      tools,
      task,
      promptArgs: vars,
      settings: {
        execTimeout: config.code_action?.exec_timeout ?? DEFAULT_CODE_ACTION.execTimeout,
        maxRepairs: config.code_action?.max_repairs ?? DEFAULT_CODE_ACTION.maxRepairs,
        maxToolCalls: config.code_action?.max_tool_calls ?? DEFAULT_CODE_ACTION.maxToolCalls,
      },
      isolation,
      maxOutputChars,
      artifacts,
      approval: options.approve,
      context: agent.toolContext,
      signal: options.signal,
    });
    return { output: result.output, codeAction: result.report };
  },
};
