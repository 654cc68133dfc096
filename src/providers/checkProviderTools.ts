import { ConfigError } from "../errors.js";
import type { FunctionTool } from "../tools/FunctionTool.js";
import { PROVIDER_ROUTES } from "./providerRoutes.js";
import { toGeminiSchema } from "./toGeminiSchema.js";

interface AgentTools {
  name: string;
  config: { model_name?: string | string[] | undefined; fallback_models?: string[] | undefined };
  tools: ReadonlyArray<{ ref: string; tool: FunctionTool; where?: { file: string; line?: number } }>;
}

/**
 * At load time (prepareTactic, so `lllm validate`, `lllm run` and `lllm batch` before anything starts): every tool of an agent whose model is
 * Gemini's must have a schema Gemini can express. Fails with the first one that cannot, naming the agent, the
 * tool, where it is bound, and the construct.
 */
export function checkProviderTools(agents: readonly AgentTools[]): void {
  for (const agent of agents) {
    // Every model of a fallback chain may be sent the tools.
    const { model_name: first, fallback_models: fallbacks = [] } = agent.config;
    const model = [...(first === undefined ? [] : Array.isArray(first) ? first : [first]), ...fallbacks].find((name) => {
      const prefix = name.includes("/") ? name.slice(0, name.indexOf("/")) : "";
      return PROVIDER_ROUTES.find((route) => route.prefix === prefix)?.wire === "gemini";
    });
    if (model === undefined) continue;
    for (const bound of agent.tools) {
      const schema = bound.tool.toTool().function.parameters;
      try {
        if (Object.keys((schema["properties"] as object | undefined) ?? {}).length > 0) toGeminiSchema(schema, bound.tool.name);
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        throw new ConfigError(error.code, `agent \`${agent.name}\` (model \`${model}\`): ${error.message}`, {
          ...(error.hint ? { hint: error.hint } : {}),
          ...(bound.where ? { location: bound.where } : {}),
        });
      }
    }
  }
}
