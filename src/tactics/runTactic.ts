import type { Agent, AgentEvent } from "../agent/index.js";
import { ConfigError } from "../errors.js";
import { Prompt } from "../prompts/index.js";
import { buildAgents } from "./buildAgents.js";
import { outputContract } from "./outputParser.js";
import type { PreparedTactic } from "./prepareTactic.js";
import { parseInput } from "./parseInput.js";
import { patternAgent, patternAgentName } from "./patternAgent.js";
import { RunScope } from "./RunScope.js";
import { loadTacticDefinition } from "./loadTacticDefinition.js";
import { looksLikeQualifiedRef } from "../registry/ref.js";
import type { AgentsRequest, RunOptions, TacticResult, TacticRunner, ToolCallRecord } from "./TacticRun.js";
import { ArtifactStore } from "../codeaction/ArtifactStore.js";
import { sandboxIsolation } from "./sandboxIsolation.js";
import type { CodeActionReport, ProgramRecord } from "../codeaction/index.js";
import type { ProxyManager } from "../proxies/index.js";
import type { RanCell } from "./notebookFile.js";

/**
 * Run a prepared tactic once with fresh agents, by its pattern (`agent`, `pipeline`, `code-action`, `notebook`, or a
 * tactic in code), and report the output, usage, every tool call and the duration (and, for programs, their report
 * and artifacts).
 */
export async function runTactic(prepared: PreparedTactic, options: RunOptions): Promise<TacticResult> {
  const started = performance.now();
  const { config } = prepared.tactic;
  const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, llm_calls: 0 };
  const toolCalls: ToolCallRecord[] = [];
  const onEvent = (event: AgentEvent): void => {
    if (event.type === "model_reply") {
      usage.prompt_tokens += event.usage.promptTokens;
      usage.completion_tokens += event.usage.completionTokens;
      usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
      usage.llm_calls += 1;
    } else if (event.type === "tool_call") {
      const { call } = event;
      toolCalls.push({ agent: event.agent, name: call.name, arguments: call.arguments, result: call.error === undefined ? call.result ?? null : null, error: call.error ?? null, duration_ms: Math.round(event.durationMs) });
    }
    options.onEvent?.(event);
  };
  const input = parseInput(config.input, options.input);
  const scope = new RunScope();
  // Programs (code-action, tool_chain) keep large results here; the folder is made only if one arrives.
  // Their total is capped like a program's workspace (`sandbox.workspace_size`).
  const workspaceMb = sandboxIsolation(config.sandbox, prepared.tactic.locate(["sandbox"])).workspaceMb;
  const artifacts = ArtifactStore.forRun(options.env ?? process.env, workspaceMb === undefined ? {} : { maxMb: workspaceMb });
  const toolChains: ProgramRecord[] = [];
  const proxyManagers = new Map<string, ProxyManager>();
  const notebookCells: RanCell[] = [];
  let codeAction: CodeActionReport | undefined;
  try {
    const agents = await buildAgents({ prepared, options, onEvent, scope, runner: tacticRunner, only: agentsUsed(prepared), toolChain: { artifacts, onScript: (record) => toolChains.push(record) }, proxyManagers });
    const vars: Record<string, unknown> = { ...(config.vars ?? {}), ...(options.vars ?? {}), input };
    let output: unknown;
    switch (config.tactic_type) {
      case "agent":
        output = await runAgentPattern(prepared, agents, vars, options);
        break;
      case "pipeline":
        output = await runPipelinePattern(prepared, agents, vars, options);
        break;
      case "code-action": {
        const { runCodeActionPattern } = await import("../codeaction/runCodeActionPattern.js");
        const result = await runCodeActionPattern(prepared, agents, vars, options, artifacts);
        output = result.output;
        codeAction = result.report;
        break;
      }
      case "notebook": {
        const { runNotebookPattern } = await import("./notebookPattern.js");
        output = (await runNotebookPattern(prepared, agents, vars, { ...options, scope, proxies: proxyManagers.get(patternAgentName(prepared) ?? ""), cells: notebookCells })).output;
        break;
      }
      default:
        if (looksLikeQualifiedRef(config.tactic_type)) {
          output = await runCodeTactic(prepared, agents, vars, input, options);
          break;
        }
        throw new ConfigError("tactic_type_unsupported", `tactic_type \`${config.tactic_type}\` cannot run yet`, {
          location: prepared.tactic.locate(["tactic_type"]) ?? { file: prepared.tactic.file },
          hint: "The built-in patterns are `agent`, `pipeline`, `code-action` and `notebook`; a package tactic is named by ref (`pkg.tactics:name`).",
        });
    }
    return {
      output,
      usage,
      tool_calls: toolCalls,
      duration_ms: Math.round(performance.now() - started),
      ...(codeAction ? { code_action: codeAction } : {}),
      ...(toolChains.length > 0 ? { tool_chains: toolChains } : {}),
      ...(artifacts.list().length > 0 ? { artifacts: artifacts.list() } : {}),
    };
  } finally {
    // Written on failure too: the cells that ran are what a person debugging the run wants to see.
    if (options.notebookOut !== undefined && config.tactic_type === "notebook") (await import("./notebookFile.js")).writeNotebook(options.notebookOut, notebookCells);
    await scope.close();
  }
}

/** Runs tactics used as tools: handed down to the agents' tools so that they need not import this module. */
export const tacticRunner: TacticRunner = {
  run: runTactic,
  async withAgents<T>({ prepared, options, onEvent }: AgentsRequest, use: (agents: Map<string, Agent>) => Promise<T>): Promise<T> {
    const scope = new RunScope();
    try {
      return await use(await buildAgents({ prepared, options, onEvent, scope, runner: tacticRunner }));
    } finally {
      await scope.close();
    }
  },
};

/** A tactic written in code (`tactic_type: pkg.tactics:name`): its `call` gets the input and fresh agents. */
async function runCodeTactic(prepared: PreparedTactic, agents: Map<string, Agent>, vars: Record<string, unknown>, input: unknown, options: RunOptions): Promise<unknown> {
  const entry = prepared.registry.resolveEntry("tactics", prepared.tactic.config.tactic_type);
  const definition = await loadTacticDefinition(entry.file);
  return definition.call(input, {
    agents: Object.fromEntries(agents),
    vars,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onText ? { onText: options.onText } : {}),
  });
}

/** The agents a run will use: the agent pattern's one agent, or the pipeline's steps' agents. */
function agentsUsed(prepared: PreparedTactic): Set<string> {
  const { config } = prepared.tactic;
  if (config.tactic_type === "pipeline") return new Set((config.steps ?? []).map((step) => step.agent));
  if (looksLikeQualifiedRef(config.tactic_type)) return new Set(prepared.agents.map((agent) => agent.name));
  const name = patternAgentName(prepared);
  return new Set(name !== undefined ? [name] : []);
}

/** The agent pattern: one agent (the first, or `agent:`) opens a dialog, receives the prompt, and responds. */
async function runAgentPattern(prepared: PreparedTactic, agents: Map<string, Agent>, vars: Record<string, unknown>, options: RunOptions): Promise<unknown> {
  const { config } = prepared.tactic;
  const agent = patternAgent(prepared, agents);
  const contract = config.output ? outputContract(config.output as Record<string, unknown>, config.name ?? "output") : undefined;
  const turn = new Prompt({ path: `${config.name ?? "tactic"}/input`, prompt: config.prompt, ...(contract ? { parser: contract.parser } : {}) });
  const dialog = agent.open("main", { promptArgs: vars });
  for (const message of options.history ?? []) dialog.add(message);
  agent.receivePrompt(turn, vars);
  const message = await agent.respond({
    ...(options.signal ? { signal: options.signal } : {}),
    // Structured output is printed whole at the end, never streamed.
    ...(options.onText && !contract ? { onText: options.onText } : {}),
    ...(contract ? { responseFormat: contract.responseFormat } : {}),
  });
  return contract ? message.parsed : message.content;
}

/** The pipeline pattern: steps in order; each sees the input, the vars and the earlier steps' `as` names. */
async function runPipelinePattern(prepared: PreparedTactic, agents: Map<string, Agent>, vars: Record<string, unknown>, options: RunOptions): Promise<unknown> {
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
  return output;
}
