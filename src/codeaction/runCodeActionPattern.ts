import type { Agent } from "../agent/index.js";
import { Prompt } from "../prompts/index.js";
import { patternAgent } from "../tactics/patternAgent.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import { programOutputChars, sandboxIsolation } from "../tactics/sandboxIsolation.js";
import type { RunOptions } from "../tactics/TacticRun.js";
import type { ArtifactStore } from "./ArtifactStore.js";
import { codeActionAgent } from "./codeActionAgent.js";
import { requireIsolation } from "./requireIsolation.js";
import { DEFAULT_CODE_ACTION, runCodeAction, type CodeActionResult } from "./runCodeAction.js";

/**
 * `tactic_type: code-action`: the tactic's agent (the first, or `agent:`) gets the tactic's prompt and writes
 * programs over its tools, with the tactic's `code_action` and `sandbox` settings.
 */
export async function runCodeActionPattern(prepared: PreparedTactic, agents: Map<string, Agent>, vars: Record<string, unknown>, options: RunOptions, artifacts: ArtifactStore): Promise<CodeActionResult> {
  const { config } = prepared.tactic;
  const agent = patternAgent(prepared, agents);
  const where = prepared.tactic.locate(["sandbox"]);
  // Checked before any model call: a run that cannot be isolated must not spend tokens first.
  const isolation = await requireIsolation(sandboxIsolation(config.sandbox, where), "code-action");
  const maxOutputChars = programOutputChars(config.sandbox, where);
  const { agent: programmer, tools } = codeActionAgent(agent);
  const task = new Prompt({ path: `${config.name ?? "tactic"}/input`, prompt: config.prompt }).format(vars);
  return runCodeAction({
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
}
