import type { Agent, AgentEvent } from "../agent/index.js";
import { ArtifactStore } from "../codeaction/ArtifactStore.js";
import { replySizeBytes } from "../config/index.js";
import type { ProgramRecord } from "../codeaction/index.js";
import type { ProxyManager } from "../proxies/index.js";
import { buildAgents } from "./buildAgents.js";
import type { RanCell } from "./notebookFile.js";
import { parseInput } from "./parseInput.js";
import { patternFor } from "./patterns/patternFor.js";
import type { PreparedTactic } from "./prepareTactic.js";
import { RunScope } from "./RunScope.js";
import { runModels } from "./runModels.js";
import { linkedSignal } from "../util/linkedSignal.js";
import { sandboxIsolation, sandboxLocator } from "./sandboxIsolation.js";
import { assertTemplateVariables } from "./templateVariables.js";
import { startRunBudget } from "./tacticBudget.js";
import { withAgentTools } from "./checkAgentTools.js";
import type { AgentsRequest, ModelCallRecord, RunOptions, TacticResult, TacticRunner, ToolCallRecord } from "./TacticRun.js";
import { UsageCounter } from "./UsageCounter.js";
import { hasLimits } from "../limits/index.js";

/**
 * Run a prepared tactic once with fresh agents, by its pattern (`agent`, `pipeline`, `code-action`, `notebook`, or a
 * tactic in code), and report the output, usage, every tool call and the duration (and, for programs, their report
 * and artifacts).
 */
export async function runTactic(prepared: PreparedTactic, options: RunOptions): Promise<TacticResult> {
  const started = performance.now();
  const { config } = prepared.tactic;
  assertTemplateVariables(prepared, { ...(options.vars ?? {}) });
  // The budget of the run tree: the caller's (a nested run's, or one the caller reads afterwards), else a new one.
  const ownBudget = options.budget === undefined ? startRunBudget(prepared, options.limits, undefined, options.limitSources) : undefined;
  const budget = options.budget ?? ownBudget!;
  await options.onStart?.();
  const dryRun = options.dryRun ? await import("./dryRun.js") : undefined;
  if (dryRun) options = { ...options, createModel: dryRun.dryRunModel };
  // A limit reached anywhere aborts the budget's signal: every part of the run that listens to its signal stops.
  const linked = options.signal ? linkedSignal([options.signal, budget.signal]) : undefined;
  options = { ...options, budget, signal: linked?.signal ?? budget.signal };
  // One factory for the whole run, nested tactics included (they get these options): a scripted model is shared.
  if (!options.createModel) options = { ...options, createModel: runModels(options, replySizeBytes(prepared.settings.reply_size)) };
  const usage = new UsageCounter();
  const toolCalls: ToolCallRecord[] = [];
  const modelCalls: ModelCallRecord[] = [];
  const onEvent = (event: AgentEvent): void => {
    if (event.type === "model_reply") {
      usage.add(event.usage);
      modelCalls.push({ agent: event.agent, model: event.model ?? "", promptTokens: event.usage.promptTokens, completionTokens: event.usage.completionTokens });
    } else if (event.type === "tool_call") {
      const { call } = event;
      toolCalls.push({ agent: event.agent, name: call.name, arguments: call.arguments, result: call.error === undefined ? call.result ?? null : null, error: call.error ?? null, durationMs: Math.round(event.durationMs) });
    }
    options.onEvent?.(event);
  };
  const input = parseInput(config.input, options.input);
  const scope = new RunScope();
  // Programs (code-action, tool_chain) keep large results here; the folder is made only if one arrives.
  // Their total is capped like a program's workspace (`sandbox.workspace_size`).
  const workspaceMb = sandboxIsolation(config.sandbox, sandboxLocator(prepared.tactic)).workspaceMb;
  const artifacts = ArtifactStore.forRun(options.env ?? process.env, { ...(workspaceMb === undefined ? {} : { maxMb: workspaceMb }), ...(options.runId !== undefined ? { runId: options.runId } : {}) });
  const toolChains: ProgramRecord[] = [];
  const proxyManagers = new Map<string, ProxyManager>();
  const notebookCells: RanCell[] = [];
  const pattern = patternFor(prepared);
  try {
    const agents = await buildAgents({ prepared, options, onEvent, scope, runner: tacticRunner, only: withAgentTools(pattern.agentsUsed(prepared), prepared.agents), toolChain: { artifacts, onScript: (record) => toolChains.push(record) }, proxyManagers });
    const vars: Record<string, unknown> = { ...(config.vars ?? {}), ...(options.vars ?? {}), input };
    const { output, codeAction } = await pattern.run({ prepared, agents, vars, input, options, scope, artifacts, proxyManagers, notebookCells });
    // The last answer may have brought the spend past a limit (a prompt larger than estimated) or been cut off at the
    // room the budget could pay: counted and recorded, it is still no answer within the limits.
    if (budget.tripped) throw budget.tripped;
    return {
      output,
      usage: usage.toReport(),
      toolCalls,
      modelCalls,
      spend: budget.report(),
      ...(hasLimits(budget.limits) ? { limits: budget.limits } : {}),
      durationMs: Math.round(performance.now() - started),
      ...(codeAction ? { codeAction } : {}),
      ...(toolChains.length > 0 ? { toolChains } : {}),
      ...(artifacts.list().length > 0 ? { artifacts: artifacts.list() } : {}),
    };
  } catch (error) {
    if (dryRun && error instanceof dryRun.DryRunStop) return { output: null, usage: usage.toReport(), toolCalls, modelCalls, spend: budget.report(), durationMs: Math.round(performance.now() - started), dryRunRequest: error.body };
    // What stopped the run is the limit, however the part that met it failed (a program killed, a tool aborted).
    throw budget.tripped ?? error;
  } finally {
    linked?.dispose();
    ownBudget?.close();
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
