import { modelChain } from "../config/index.js";
import { formatLocation, type SourceLocation } from "../errors.js";
import { PriceTable, type ModelPrice } from "../providers/PriceTable.js";
import { providerOfModel, unknownModelWarning } from "../providers/modelCatalogue.js";
import { PROVIDER_ROUTES } from "../providers/providerRoutes.js";
import { maskUrlCredentials } from "../util/urlCredentials.js";
import { SCHEMA_VERSION, writeOut } from "./output.js";

export interface ModelsCommandOptions {
  json?: boolean;
}

/**
 * `lllm models`: the provider prefixes with their key variables (and whether each is set: never its value), their
 * base-URL variables, and the models of the price table by provider. Reads only the environment.
 */
export function modelsCommand(options: ModelsCommandOptions, env: NodeJS.ProcessEnv = process.env): void {
  const table = PriceTable.load();
  const isSet = (name: string | undefined): boolean => name !== undefined && (env[name] ?? "").trim() !== "";
  const providers = PROVIDER_ROUTES.map((route) => {
    const keys = [route.apiKeyEnv, route.altApiKeyEnv].filter((name): name is string => name !== undefined);
    return {
      prefix: `${route.prefix}/`,
      api: route.wire ?? "openai",
      key_env: keys,
      key_set: keys.some(isSet),
      key_required: route.keyRequired,
      ...(route.baseURLEnv ? { base_url_env: route.baseURLEnv } : {}),
      base_url: (route.baseURLEnv && isSet(route.baseURLEnv) ? env[route.baseURLEnv] : undefined) ?? route.defaultBaseURL ?? null,
      models: table.names().filter((name) => providerOfModel(name) === route.prefix),
    };
  });
  if (options.json) {
    writeOut(JSON.stringify({ schema_version: SCHEMA_VERSION, prices_as_of: table.asOf, providers }, null, 2));
    return;
  }
  const lines: string[] = [];
  for (const provider of providers) {
    const key = provider.key_env.length === 0 ? "no key" : `${provider.key_env.join(" or ")} ${provider.key_set ? "set" : provider.key_required ? "NOT set" : "not set (optional)"}`;
    lines.push(`${provider.prefix.padEnd(12)} ${key}${provider.base_url ? ` · ${provider.base_url}` : ` · base URL from ${provider.base_url_env ?? "invoker_config.base_url"}`}`);
    if (provider.models.length > 0) lines.push(`${" ".repeat(13)}${provider.models.map((name) => `${provider.prefix === "openai/" ? "" : provider.prefix}${name}`).join(", ")}`);
  }
  lines.push("", `A bare name (gpt-4o-mini) goes to OpenAI. Models listed have prices (as of ${table.asOf}); others work too.`);
  writeOut(lines.join("\n"));
}

/**
 * Warn (on stderr, before any call), once for each model name, about each model of each agent's chain that looks
 * like a typo (see `unknownModelWarning`), at its place in the file when `locate` finds it. A base URL of the user's
 * (OPENAI_BASE_URL, or the agent's `invoker_config.base_url`, which is its first model's) takes names as they are:
 * the warning says where such a name goes.
 */
export function warnUnknownModels(
  agents: ReadonlyArray<{ config: { model_name?: string | string[] | undefined; fallback_models?: string[] | undefined; invoker_config?: Record<string, unknown> | undefined } }>,
  prices: Record<string, ModelPrice>,
  warn: (text: string) => void,
  options: { env?: NodeJS.ProcessEnv; locate?: (agentIndex: number, position: number) => SourceLocation | undefined } = {},
): void {
  const env = options.env ?? process.env;
  const table = PriceTable.load(prices);
  const seen = new Set<string>();
  const baseURL = (env["OPENAI_BASE_URL"] ?? "").trim();
  agents.forEach((agent, agentIndex) => {
    // Every model of a fallback chain: a typo in the second one shows only on the day the first is down.
    modelChain(agent.config).forEach((model, position) => {
      if (seen.has(model)) return;
      seen.add(model);
      const server = position === 0 && typeof agent.config.invoker_config?.["base_url"] === "string" ? `invoker_config.base_url (${maskUrlCredentials(agent.config.invoker_config["base_url"])})` : baseURL !== "" ? `OPENAI_BASE_URL (${maskUrlCredentials(baseURL)})` : undefined;
      const text = unknownModelWarning(model, table, server);
      if (!text) return;
      const where = options.locate?.(agentIndex, position);
      warn(where ? `${formatLocation(where)}: ${text}` : text);
    });
  });
}
