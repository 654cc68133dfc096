import type { AgentConfig } from "../config/index.js";
import type { Model } from "../providers/Model.js";
import { providerRequestBody } from "../providers/providerRequestBody.js";

/** Thrown by the dry-run model with the first request's body: the run stops there and nothing is sent anywhere. */
export class DryRunStop extends Error {
  constructor(readonly body: Record<string, unknown>) {
    super("dry run");
  }
}

/**
 * A model that builds the body of its first request exactly as its provider would (in the provider's own format:
 * OpenAI chat or Responses, Anthropic Messages, Gemini generateContent; model_args merged, no empty tool list, …)
 * and stops.
 */
export function dryRunModel(config: AgentConfig): Model {
  const name = config.model_name ?? "";
  return {
    name,
    generate: async (request) => {
      throw new DryRunStop(providerRequestBody(name, config.api_type, request) as Record<string, unknown>);
    },
  };
}
