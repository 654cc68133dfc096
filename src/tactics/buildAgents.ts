import { Agent, type AgentEvent } from "../agent/index.js";
import type { AgentConfig } from "../config/index.js";
import { Prompt } from "../prompts/index.js";
import type { Model } from "../providers/Model.js";
import { createModel } from "../providers/index.js";
import type { PreparedTactic } from "./prepareTactic.js";
import type { RunScope } from "./RunScope.js";
import type { RunOptions } from "./TacticRun.js";

/**
 * Fresh agents for one run (seed Step 15: every tactic call builds fresh agents, so nothing leaks between runs).
 * Agents with the same model configuration share one model client.
 */
export async function buildAgents(prepared: PreparedTactic, options: RunOptions, onEvent: (event: AgentEvent) => void, scope: RunScope): Promise<Map<string, Agent>> {
  const models = new Map<string, Promise<Model>>();
  const makeModel = (config: AgentConfig): Promise<Model> => {
    const key = JSON.stringify([config.model_name, config.api_type, config.invoker, config.invoker_config]);
    let model = models.get(key);
    if (!model) {
      model = Promise.resolve(options.createModel ? options.createModel(config) : defaultModel(config, options));
      models.set(key, model);
    }
    return model;
  };
  const agents = new Map<string, Agent>();
  for (const bound of prepared.agents) {
    const { config } = bound;
    const systemPrompt = new Prompt({ path: bound.systemPrompt.ref ?? `${bound.name}/system`, prompt: bound.systemPrompt.text, functionList: bound.tools.map((entry) => entry.tool) });
    agents.set(
      bound.name,
      new Agent({
        name: bound.name,
        systemPrompt,
        model: await makeModel(config),
        ...(config.model_args ? { modelArgs: config.model_args } : {}),
        ...(options.maxSteps !== undefined ? { maxInterruptSteps: options.maxSteps } : config.max_interrupt_steps !== undefined ? { maxInterruptSteps: config.max_interrupt_steps } : {}),
        ...(config.max_exception_retry !== undefined ? { maxExceptionRetry: config.max_exception_retry } : {}),
        resolveTool: (name) => prepared.registry.resolveTool(name).tool,
        onEvent,
        toolContext: { cwd: options.cwd ?? process.cwd(), ...(options.env ? { env: options.env } : {}) },
      }),
    );
  }
  return agents;
}

function defaultModel(config: AgentConfig, options: RunOptions): Model {
  return createModel({
    model: config.model_name ?? "",
    ...(config.api_type ? { apiType: config.api_type } : {}),
    ...(config.invoker ? { invoker: config.invoker } : {}),
    ...(config.invoker_config ? { invokerConfig: config.invoker_config } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
}
