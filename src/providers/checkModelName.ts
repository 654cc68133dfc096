import { ConfigError } from "../errors.js";
import { didYouMean } from "../util/closest.js";
import { PROVIDER_ROUTES, type ProviderRoute } from "./providerRoutes.js";

// Apart from createModel.ts, which imports every model class (and with them the HTTP client, the retry loop and
// the answer readers): `lllm validate` checks model names and builds no model, so it loads none of them.

/**
 * Check a model name as `createModel` would read it, without building anything or reading a key: a `ConfigError`
 * for an unknown provider prefix or an empty name (`lllm validate` checks every model of a fallback chain so).
 * `customBaseURL`: the agent (or OPENAI_BASE_URL) names its own server, where any name may be sent as is.
 */
export function checkModelName(model: string, options: { customBaseURL?: boolean } = {}): void {
  if (model.startsWith("scripted:")) {
    if (model === "scripted:") throw new ConfigError("config_invalid_model", "`scripted:` needs a file: `scripted:<file.yaml>`");
    return;
  }
  findRoute(model, options.customBaseURL ?? false);
}

/**
 * The route of a model name and the name to send. A name whose first segment is not a known prefix
 * (`Qwen/Qwen2.5-7B`) is sent whole to a custom base URL; without one it is most likely a typo or a provider we
 * do not speak (`anthropic/…`), which would only fail later as a confusing 404 from OpenAI.
 */
export function findRoute(model: string, hasCustomBaseURL: boolean): { route: ProviderRoute; wireModel: string } {
  const openai = PROVIDER_ROUTES[0]!;
  const slash = model.indexOf("/");
  if (slash < 0) return { route: openai, wireModel: model };
  const prefix = model.slice(0, slash);
  const route = PROVIDER_ROUTES.find((candidate) => candidate.prefix === prefix);
  if (route) {
    const wireModel = model.slice(slash + 1);
    if (wireModel === "") throw new ConfigError("config_invalid_model", `model \`${model}\` has no model name after \`${prefix}/\``);
    return { route, wireModel };
  }
  if (hasCustomBaseURL) return { route: openai, wireModel: model };
  const prefixes = PROVIDER_ROUTES.map((candidate) => `${candidate.prefix}/`);
  const suggestion = didYouMean(`${prefix}/`, prefixes);
  throw new ConfigError("config_unknown_provider", `model \`${model}\`: unknown provider prefix \`${prefix}/\`${suggestion ? `; ${suggestion}` : ""}`, {
    hint: `known prefixes: ${prefixes.join(", ")}; for another OpenAI-compatible server, set invoker_config.base_url and the name is sent as is`,
  });
}
