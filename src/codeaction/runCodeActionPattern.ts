import type { Agent } from "../agent/index.js";
import { ConfigError } from "../errors.js";
import { Prompt } from "../prompts/index.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import { parseMegabytes, sandboxIsolation } from "../tactics/sandboxIsolation.js";
import type { RunOptions } from "../tactics/TacticRun.js";
import type { ArtifactStore } from "./ArtifactStore.js";
import { codeActionAgent } from "./codeActionAgent.js";
import { requireIsolation } from "./requireIsolation.js";
import { DEFAULT_CODE_ACTION, runCodeAction, type CodeActionResult } from "./runCodeAction.js";

/** A program's printed answer is kept up to this size unless `sandbox.output_size` says otherwise (1 MB). */
export const DEFAULT_OUTPUT_CHARS = 1024 * 1024;

/**
 * `tactic_type: code-action`: the tactic's agent (the first, or `agent:`) gets the tactic's prompt and writes
 * programs over its tools, with the tactic's `code_action` and `sandbox` settings.
 */
export async function runCodeActionPattern(prepared: PreparedTactic, agents: Map<string, Agent>, vars: Record<string, unknown>, options: RunOptions, artifacts: ArtifactStore): Promise<CodeActionResult> {
  const { config } = prepared.tactic;
  const name = config.agent ?? prepared.agents[0]?.name;
  const agent = name !== undefined ? agents.get(name) : undefined;
  if (!agent) throw new ConfigError("tactic_no_agent", "the tactic has no agent to run", { location: { file: prepared.tactic.file }, hint: "Add an entry to agent_configs." });
  const where = prepared.tactic.locate(["sandbox"]);
  // Checked before any model call: a run that cannot be isolated must not spend tokens first.
  const isolation = await requireIsolation(sandboxIsolation(config.sandbox, where), "code-action");
  const outputSize = config.sandbox?.output_size;
  const maxOutputChars = outputSize === undefined ? DEFAULT_OUTPUT_CHARS : Math.round(parseMegabytes(outputSize, "output_size", where) * 1024 * 1024);
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
