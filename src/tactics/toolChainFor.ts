import { ArtifactStore, DEFAULT_TOOL_CHAIN, requireIsolation, toolChainTool, type ProgramRecord } from "../codeaction/index.js";
import type { ToolChainConfig } from "../config/index.js";
import type { FunctionTool } from "../tools/index.js";
import type { PreparedTactic } from "./prepareTactic.js";
import { programOutputChars, sandboxIsolation } from "./sandboxIsolation.js";
import type { RunOptions } from "./TacticRun.js";

/** Where a run's tool_chain scripts keep their artifacts and report. */
export interface ToolChainRun {
  artifacts: ArtifactStore;
  onScript: (record: ProgramRecord) => void;
}

/**
 * The `tool_chain` tool of an agent whose config says `tool_chain: true` (or gives its settings): it runs scripts
 * over `tools`, the agent's other tools (those listed so far: files, MCP servers, tactics, proxies). The sandbox is
 * checked now, before any model call, like code-action's.
 */
export async function toolChainFor(prepared: PreparedTactic, agent: string, config: true | ToolChainConfig, tools: readonly FunctionTool[], options: RunOptions, run: ToolChainRun | undefined): Promise<FunctionTool> {
  const settings = config === true ? {} : config;
  const { sandbox } = prepared.tactic.config;
  const where = prepared.tactic.locate(["sandbox"]);
  const isolation = await requireIsolation(sandboxIsolation(sandbox, where), `the tool_chain of agent \`${agent}\``);
  return toolChainTool({
    tools: [...tools],
    settings: { timeout: settings.timeout ?? DEFAULT_TOOL_CHAIN.timeout, maxToolCalls: settings.max_tool_calls ?? DEFAULT_TOOL_CHAIN.maxToolCalls },
    isolation,
    maxOutputChars: programOutputChars(sandbox, where),
    artifacts: run?.artifacts ?? ArtifactStore.forRun(options.env ?? process.env),
    approval: options.approve,
    ...(run ? { onScript: run.onScript } : {}),
  });
}
