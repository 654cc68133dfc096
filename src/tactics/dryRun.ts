import type { AgentConfig } from "../config/index.js";
import type { Model } from "../providers/Model.js";
import { chatRequestBody } from "../providers/OpenAIChatModel.js";
import { responsesRequestBody } from "../providers/OpenAIResponsesModel.js";
import { wireModelName } from "../providers/providerRoutes.js";

/** Thrown by the dry-run model with the first request's body: the run stops there and nothing is sent anywhere. */
export class DryRunStop extends Error {
  constructor(readonly body: Record<string, unknown>) {
    super("dry run");
  }
}

/** A model that builds the body of its first request exactly as the provider would (model_args merged, no empty tool list, …) and stops. */
export function dryRunModel(config: AgentConfig): Model {
  const name = config.model_name ?? "";
  return {
    name,
    generate: async (request) => {
      const wireModel = wireModelName(name);
      const body = config.api_type === "response" ? responsesRequestBody(wireModel, request) : chatRequestBody(wireModel, request);
      throw new DryRunStop(body as unknown as Record<string, unknown>);
    },
  };
}
