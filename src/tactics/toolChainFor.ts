import { ArtifactStore, DEFAULT_TOOL_CHAIN, toolChainTool, type ProgramRecord } from "../codeaction/index.js";
import type { ToolChainConfig } from "../config/index.js";
import { SandboxError } from "../errors.js";
import type { FunctionTool } from "../tools/index.js";
import type { PreparedTactic } from "./prepareTactic.js";
import { programSandbox, type ProgramSandbox } from "./programSandbox.js";
import type { RunOptions } from "./TacticRun.js";

/** Where a run's tool_chain scripts keep their artifacts and report. */
export interface ToolChainRun {
  artifacts: ArtifactStore;
  onScript: (record: ProgramRecord) => void;
}

export interface ToolChainForOptions {
  prepared: PreparedTactic;
  /** The agent's name, for messages. */
  agent: string;
  config: true | ToolChainConfig;
  /** The agent's other tools (those listed so far: files, MCP servers, tactics, proxies). */
  tools: readonly FunctionTool[];
  options: RunOptions;
  run?: ToolChainRun | undefined;
  /** Warnings for stderr: no sandbox (the tool is left out), a script that reached max_tool_calls. */
  onWarning: (message: string) => void;
}

/** The runs (prepared tactics) already warned that tool_chain has no sandbox: one warning a run, not one an agent. */
const warnedRuns = new WeakSet<PreparedTactic>();

/**
 * The `tool_chain` tool of an agent whose config says `tool_chain: true` (or gives its settings): it runs scripts
 * over the agent's other tools. The sandbox is checked now, before any model call. Without a working sandbox the
 * tool is left out with one warning and the run goes on (seed 001: "the tool is simply not registered"); scripts
 * never run unisolated unless the tactic says `sandbox: {backend: none}`.
 */
export async function toolChainFor({ prepared, agent, config, tools, options, run, onWarning }: ToolChainForOptions): Promise<FunctionTool | undefined> {
  const settings = config === true ? {} : config;
  let sandbox: ProgramSandbox;
  try {
    sandbox = await programSandbox(prepared, `the tool_chain of agent \`${agent}\``);
  } catch (error) {
    if (!(error instanceof SandboxError) || error.code !== "sandbox_unavailable") throw error;
    if (!warnedRuns.has(prepared)) {
      warnedRuns.add(prepared);
      onWarning(`tool_chain is left out: ${error.message}. ${error.hint ?? ""}`.trim());
    }
    return undefined;
  }
  return toolChainTool({
    tools: [...tools],
    settings: { timeout: settings.timeout ?? DEFAULT_TOOL_CHAIN.timeout, maxToolCalls: settings.max_tool_calls ?? DEFAULT_TOOL_CHAIN.maxToolCalls },
    isolation: sandbox.isolation,
    maxOutputChars: sandbox.maxOutputChars,
    artifacts: run?.artifacts ?? ArtifactStore.forRun(options.env ?? process.env),
    approval: options.approve,
    ...(run ? { onScript: run.onScript } : {}),
    onWarning,
    budget: options.budget,
    agent,
  });
}
