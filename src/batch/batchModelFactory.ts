import type { AgentConfig } from "../config/index.js";
import { createModel, type Model } from "../providers/index.js";
import type { RetryNotice } from "../providers/requestWithRetries.js";
import type { AdaptiveConcurrency } from "./AdaptiveConcurrency.js";
import type { ProviderGate } from "./ProviderGate.js";

export interface BatchModelFactoryOptions {
  gate: ProviderGate;
  concurrency: AdaptiveConcurrency;
  /** `--timeout`, in seconds. */
  modelTimeout?: number;
  /** Aborts waiting at the gate (a second Ctrl-C). */
  signal?: AbortSignal;
  /** Told of every retry (the batch's retry reporter). */
  onRetry?: (notice: RetryNotice) => void;
  env?: NodeJS.ProcessEnv;
  /** The largest model reply read, in bytes (the project's `reply_size`). */
  maxReplyBytes?: number;
}

/** Which limit a model's calls count against: its server. Models behind one base URL share its rate limit. */
export function providerKey(config: AgentConfig): string {
  const baseURL = config.invoker_config?.base_url;
  if (typeof baseURL === "string") return baseURL;
  const name = config.model_name ?? "";
  return name.includes("/") ? name.slice(0, name.indexOf("/")) : "openai";
}

/**
 * Builds the agents' models for a batch: the model `lllm run` would build (same as runTactic's default: the
 * agent's timeout, retries), with every call passing the batch's shared gate first, and a 429 pausing the whole
 * provider and halving the concurrency.
 */
export function batchModelFactory(options: BatchModelFactoryOptions): (config: AgentConfig) => Model {
  // One client per model configuration for the whole batch (building an SDK client per item costs more than the
  // item's own work). Scripted models replay a script from its start, so each item gets its own.
  const shared = new Map<string, Model>();
  return (config) => {
    const key = JSON.stringify([config.model_name, config.api_type, config.invoker, config.invoker_config, config.timeout, config.model_args?.["timeout"]]);
    const scripted = (config.model_name ?? "").startsWith("scripted:");
    const existing = scripted ? undefined : shared.get(key);
    if (existing) return existing;
    const built = buildModel(config);
    if (!scripted) shared.set(key, built);
    return built;
  };

  function buildModel(config: AgentConfig): Model {
    const provider = providerKey(config);
    const fromArgs = config.model_args?.["timeout"];
    const timeout = options.modelTimeout ?? config.timeout ?? (typeof fromArgs === "number" ? fromArgs : undefined);
    const model = createModel({
      ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
      ...(options.maxReplyBytes !== undefined ? { maxReplyBytes: options.maxReplyBytes } : {}),
      onRetry: (notice) => {
        // The retry notice is the provider layer's one report of a 429.
        if (notice.status === 429) {
          options.gate.pause(provider, notice.waitMs);
          options.concurrency.backOff();
        }
        options.onRetry?.(notice);
      },
      model: config.model_name ?? "",
      ...(config.api_type ? { apiType: config.api_type } : {}),
      ...(config.invoker ? { invoker: config.invoker } : {}),
      ...(config.invoker_config ? { invokerConfig: config.invoker_config } : {}),
      ...(options.env ? { env: options.env } : {}),
    });
    return {
      name: model.name,
      generate: async (request) => {
        await options.gate.pass(provider, request.signal ?? options.signal);
        const response = await model.generate(request);
        options.gate.addTokens(provider, response.usage.promptTokens + response.usage.completionTokens);
        return response;
      },
      // A resumed item's replayed answers reach the provider's model (see `Model.adopt`).
      adopt: (response, agent) => model.adopt?.(response, agent),
    };
  }
}
