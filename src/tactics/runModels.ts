import path from "node:path";
import type { AgentConfig } from "../config/index.js";
import type { Model } from "../providers/Model.js";
import { createModel } from "../providers/index.js";
import type { RunOptions } from "./TacticRun.js";

/**
 * The model factory of one run, handed down with its options to the tactics its agents use as tools. A
 * `scripted:` file is read once per run and its model shared by every agent that names it, nested tactics' agents
 * included, so that a script of several agents replays as one (each agent from its own turns, see `ScriptedModel`);
 * other models are made as before, for each agent group.
 */
export function runModels(options: RunOptions, maxReplyBytes?: number): (config: AgentConfig) => Model {
  const scripted = new Map<string, Model>();
  return (config) => {
    const name = config.model_name ?? "";
    if (!name.startsWith("scripted:")) return defaultModel(config, options, maxReplyBytes);
    const file = path.resolve(options.cwd ?? process.cwd(), name.slice("scripted:".length));
    let model = scripted.get(file);
    if (!model) scripted.set(file, (model = defaultModel(config, options, maxReplyBytes)));
    return model;
  };
}

/**
 * The model timeout in seconds: `--timeout`, else the agent's `timeout`, else `model_args.timeout` (LiteLLM's
 * spelling, which LLLM tactics use; it is a client setting and is not sent to the server).
 */
export function modelTimeoutSeconds(config: AgentConfig, options: RunOptions): number | undefined {
  const fromArgs = config.model_args?.["timeout"];
  return options.modelTimeout ?? config.timeout ?? (typeof fromArgs === "number" ? fromArgs : undefined);
}

/** The model an agent's configuration names; `maxReplyBytes`: the project's `reply_size` cap on a reply's body. */
export function defaultModel(config: AgentConfig, options: RunOptions, maxReplyBytes?: number): Model {
  const timeout = modelTimeoutSeconds(config, options);
  return createModel({
    ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
    ...(maxReplyBytes !== undefined ? { maxReplyBytes } : {}),
    ...(options.onModelRetry ? { onRetry: options.onModelRetry } : {}),
    model: config.model_name ?? "",
    ...(config.api_type ? { apiType: config.api_type } : {}),
    ...(config.invoker ? { invoker: config.invoker } : {}),
    ...(config.invoker_config ? { invokerConfig: config.invoker_config } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
}
