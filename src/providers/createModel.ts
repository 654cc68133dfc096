import { ConfigError } from "../errors.js";
import { ScriptedModel } from "./ScriptedModel.js";
import { didYouMean } from "../util/closest.js";
import { AnthropicModel } from "./AnthropicModel.js";
import { GeminiModel } from "./GeminiModel.js";
import type { Model } from "./Model.js";
import { OpenAIChatModel } from "./OpenAIChatModel.js";
import type { OpenAIEndpoint, OpenAIModelOptions } from "./OpenAIEndpoint.js";
import { OpenAIResponsesModel } from "./OpenAIResponsesModel.js";
import { PROVIDER_ROUTES } from "./providerRoutes.js";
import { findRoute } from "./checkModelName.js";
import type { ProviderRoute } from "./providerRoutes.js";
import type { RetryNotice } from "./requestWithRetries.js";
import type { RetryPolicy } from "./RetryPolicy.js";
import { proxyCredentials, proxyEnvironment, ProxySettingInvalid, type ProxyEnvironment } from "../util/proxyEnvironment.js";
import { secrets } from "../util/redact.js";
import { maskUrlCredentials } from "../util/urlCredentials.js";
import { terminalText } from "../util/terminalText.js";

/** The `invoker` values accepted: LLLM configs say `litellm`; both route the same way. */
export const INVOKERS = ["litellm", "openai"] as const;
/** The `api_type` values: chat completions (default) or the Responses API. */
export const API_TYPES = ["completion", "response"] as const;

/** An agent's model settings, as a tactic file gives them (`model_name`, `api_type`, `invoker`, `invoker_config`). */
export interface CreateModelOptions {
  /** `gpt-4o-mini`, `<prefix>/<model>` (see `PROVIDER_ROUTES`), or `scripted:<file>`. */
  model: string;
  apiType?: (typeof API_TYPES)[number];
  invoker?: string;
  /** `base_url` and `api_key_env` override the route's; other keys are ignored (they are litellm's). */
  invokerConfig?: { base_url?: string; api_key_env?: string; [key: string]: unknown };
  /** Where keys and base-URL variables are read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** What a `scripted:` path is relative to; default the process's working folder. */
  cwd?: string;
  /** Overrides of the retry policy; `LLLM_RETRY_DELAY_MS` in `env` sets the first backoff delay (for tests). */
  retry?: Partial<RetryPolicy>;
  /** Per-attempt timeout without progress; default 120 s. */
  timeoutMs?: number;
  /** Told before each retry of a failed request (attempt n of N, cause, wait). */
  onRetry?: (notice: RetryNotice) => void;
  /** The largest answer body read, in bytes (the `reply_size` setting); default 64 MB. */
  maxReplyBytes?: number;
}

/**
 * The `Model` for an agent's settings. Keys and URLs are checked here, before any request, so that a missing
 * key fails the run at start (exit 2) with the variable to set. No network access and no SDK loading happen
 * until the first `generate`.
 */
export function createModel(options: CreateModelOptions): Model {
  const { model } = options;
  if (model.startsWith("scripted:")) {
    const file = model.slice("scripted:".length);
    if (file === "") throw new ConfigError("config_invalid_model", "`scripted:` needs a file: `scripted:<file.yaml>`");
    return ScriptedModel.fromFile(file, { name: model, ...(options.cwd ? { cwd: options.cwd } : {}) });
  }
  const { wire, modelOptions } = modelSetup(options);
  if (wire === "anthropic") return new AnthropicModel(modelOptions);
  if (wire === "gemini") return new GeminiModel(modelOptions);
  return options.apiType === "response" ? new OpenAIResponsesModel(modelOptions) : new OpenAIChatModel(modelOptions);
}

/** Where a (not scripted) model's calls go and how: the checks of `createModel`, without building the model. */
export interface ModelSetup {
  wire: "openai" | "anthropic" | "gemini";
  /** The route's prefix (`openai` for names without one). */
  prefix: string;
  modelOptions: OpenAIModelOptions;
}

/**
 * The endpoint, key and options of a model's settings, checked as `createModel` checks them (a missing key is a
 * `ConfigError`). The batch APIs (`lllm batch --provider-batch`) send to the same endpoint with the same key.
 */
export function modelSetup(options: CreateModelOptions): ModelSetup {
  const { model } = options;
  checkChoice("invoker", options.invoker, INVOKERS);
  checkChoice("api_type", options.apiType, API_TYPES);
  const env = options.env ?? process.env;
  const { route, wireModel, endpoint } = modelEndpoint(options);
  const modelOptions: OpenAIModelOptions = { name: model, model: wireModel, endpoint };
  const retry = { ...retryFromEnv(env), ...options.retry };
  if (Object.keys(retry).length > 0) modelOptions.retry = retry;
  if (options.timeoutMs !== undefined) {
    if (!(options.timeoutMs > 0) || !Number.isFinite(options.timeoutMs)) throw new ConfigError("config_invalid_timeout", `the model timeout must be a number of seconds above 0, got ${options.timeoutMs / 1000}`);
    modelOptions.timeoutMs = options.timeoutMs;
  }
  if (options.onRetry) modelOptions.onRetry = options.onRetry;
  const proxies = proxiesOf(env);
  if (proxies !== undefined || options.maxReplyBytes !== undefined) {
    modelOptions.transport = { ...(proxies ? { proxies } : {}), ...(options.maxReplyBytes !== undefined ? { maxReplyBytes: options.maxReplyBytes } : {}) };
  }
  return { wire: route.wire ?? "openai", prefix: route.prefix, modelOptions };
}

/**
 * Where an agent's model is served and with which key: the route, the name sent, the API root and the key (from
 * `env`). Throws the same errors as `createModel` for a missing base URL or key; no network access. `lllm doctor`
 * asks it to check a tactic's models without running them.
 */
export function modelEndpoint(options: CreateModelOptions): { route: ProviderRoute; wireModel: string; endpoint: OpenAIEndpoint } {
  const { model } = options;
  const env = options.env ?? process.env;
  const config = options.invokerConfig ?? {};
  const baseURLOverride = stringSetting(config, "base_url");
  const apiKeyEnvOverride = stringSetting(config, "api_key_env");
  const { route, wireModel } = findRoute(model, baseURLOverride !== undefined || nonEmpty(env["OPENAI_BASE_URL"]) !== undefined);

  const routeBaseURL = (route.baseURLEnv ? nonEmpty(env[route.baseURLEnv]) : undefined) ?? route.defaultBaseURL;
  const baseURL = baseURLOverride ?? routeBaseURL;
  if (baseURL === undefined) {
    throw new ConfigError("provider_missing_base_url", `model \`${model}\` needs the server's URL in ${route.baseURLEnv}, which is not set`, {
      hint: `set it with \`export ${route.baseURLEnv}=http://host:8000/v1\`, or give invoker_config.base_url`,
    });
  }
  checkURL(baseURL, baseURLOverride !== undefined ? "invoker_config.base_url" : (route.baseURLEnv ?? "base URL"));
  const root = apiRoot(route, baseURL);

  // Gemini's key may be in GOOGLE_API_KEY instead; the variable it came from is the one named in errors.
  const useAlt = apiKeyEnvOverride === undefined && route.altApiKeyEnv !== undefined && nonEmpty(env[route.apiKeyEnv ?? ""]) === undefined && nonEmpty(env[route.altApiKeyEnv]) !== undefined;
  const apiKeyEnv = apiKeyEnvOverride ?? (useAlt ? route.altApiKeyEnv : route.apiKeyEnv);
  const apiKey = apiKeyEnv ? nonEmpty(env[apiKeyEnv]) : undefined;
  // A hosted service always needs its key, so its absence is caught now. A server the user points at (a base URL
  // of their own) may not: it says so with a 401, which names the variable too.
  const keyRequired = apiKeyEnvOverride !== undefined || (route.keyRequired && root === route.defaultBaseURL);
  if (keyRequired && apiKey === undefined) {
    throw new ConfigError("provider_missing_key", `model \`${model}\` needs an API key in ${apiKeyEnv}${route.altApiKeyEnv && apiKeyEnvOverride === undefined ? ` (or ${route.altApiKeyEnv})` : ""}, which is not set`, {
      hint: `set it with \`export ${apiKeyEnv}=…\` or \`lllm keys set ${apiKeyEnv}\`, or name another variable with invoker_config.api_key_env`,
    });
  }

  if (apiKeyEnvOverride !== undefined && baseURLOverride === undefined) assertOwnServer({ model, apiKeyEnv: apiKeyEnvOverride, route, root, env });

  const endpoint: OpenAIEndpoint = { baseURL: root };
  if (apiKey !== undefined) endpoint.apiKey = apiKey;
  if (apiKeyEnv !== undefined) endpoint.apiKeyEnv = apiKeyEnv;
  // A connection error then names the setting to check: the user may have set OPENAI_BASE_URL and never seen invoker_config.
  const fromEnv = route.baseURLEnv !== undefined && nonEmpty(env[route.baseURLEnv]) !== undefined;
  if (baseURLOverride !== undefined) endpoint.baseURLFrom = "invoker_config.base_url";
  else if (fromEnv) endpoint.baseURLFrom = route.baseURLEnv;
  if (route.prefix === "openai") {
    const organization = nonEmpty(env["OPENAI_ORG_ID"]);
    const project = nonEmpty(env["OPENAI_PROJECT_ID"]);
    if (organization) endpoint.organization = organization;
    if (project) endpoint.project = project;
  }
  return { route, wireModel, endpoint };
}

/**
 * A provider's own key variable (`OPENROUTER_API_KEY`, `ANTHROPIC_API_KEY`, …) named by `invoker_config.api_key_env`
 * for a model of another provider goes to that provider's server only: its usual URL or its base-URL variable's.
 * Sent to another server (OpenAI's, for a bare model name), the key would leak to a party that has no business with
 * it. A `base_url` written beside `api_key_env` says where the key goes, and is the user's to judge.
 */
function assertOwnServer(options: { model: string; apiKeyEnv: string; route: ProviderRoute; root: string; env: NodeJS.ProcessEnv }): void {
  const { model, apiKeyEnv, route, root, env } = options;
  const owner = PROVIDER_ROUTES.find((candidate) => candidate.apiKeyEnv === apiKeyEnv || candidate.altApiKeyEnv === apiKeyEnv);
  if (!owner || owner.prefix === route.prefix) return;
  const servers = [owner.defaultBaseURL, owner.baseURLEnv ? nonEmpty(env[owner.baseURLEnv]) : undefined].filter((url): url is string => url !== undefined);
  if (servers.some((url) => originOf(url) === originOf(root))) return;
  throw new ConfigError("config_invalid_invoker_config", `invoker_config.api_key_env names ${apiKeyEnv}, the key of \`${owner.prefix}/\` models, but model \`${model}\` is sent to ${maskUrlCredentials(root)}: the key would go to a server that is not ${owner.prefix}'s`, {
    hint: `name the model with its prefix (\`${owner.prefix}/…\`), which sends it to ${owner.prefix} with ${apiKeyEnv}; or, for a server that takes that key, give its base_url beside api_key_env; or keep the key in a variable of its own`,
  });
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

function checkChoice(key: "invoker" | "api_type", value: string | undefined, valid: readonly string[]): void {
  if (value === undefined || valid.includes(value)) return;
  const suggestion = didYouMean(value, valid);
  throw new ConfigError(`config_unknown_${key}`, `unknown ${key} \`${value}\`; valid: ${valid.join(", ")}${suggestion ? ` (${suggestion})` : ""}`);
}

function stringSetting(config: Record<string, unknown>, key: string): string | undefined {
  const value = config[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || value.trim() === "") throw new ConfigError("config_invalid_invoker_config", `invoker_config.${key} must be a non-empty string, got ${JSON.stringify(value)}`);
  return value.trim();
}

/**
 * The base URL as the client takes it, without trailing slashes. Anthropic's SDK adds `/v1/messages` and the
 * Gemini client `/v1beta/models/…` themselves, so for those a root written with its version (`…/v1`, as
 * OpenAI-style URLs are) has it removed: kept, every request would go to `/v1/v1/…` and fail as a 404.
 */
function apiRoot(route: ProviderRoute, url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  if (route.wire === "anthropic") return trimmed.replace(/\/v1$/, "");
  if (route.wire === "gemini") return trimmed.replace(/\/v1(?:beta)?$/, "");
  return trimmed;
}

/**
 * The value itself is not quoted: what is in a base URL's place when it is no URL is often a key pasted into the
 * wrong variable (`OPENAI_BASE_URL=sk-…`), which no redaction knows as a secret. Its scheme is safe to name.
 */
function checkURL(url: string, source: string): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new ConfigError("config_invalid_base_url", `${source} is not a URL (its value, ${url.length} characters, is not shown, in case it is a key set in the wrong place)`, { hint: "give the API root, e.g. http://localhost:8000/v1" });
  }
  if (protocol !== "http:" && protocol !== "https:") throw new ConfigError("config_invalid_base_url", `${source} must be an http(s) URL; it begins \`${terminalText(protocol.slice(0, 32))}\``, { hint: "give the API root with its scheme, e.g. http://localhost:11434/v1" });
}

/**
 * `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` (either case) of `env`. A proxy's `user:password` is a secret: it is
 * redacted from every text lllm prints, as keys are.
 */
function proxiesOf(env: NodeJS.ProcessEnv): ProxyEnvironment | undefined {
  let proxies: ProxyEnvironment | undefined;
  try {
    proxies = proxyEnvironment(env);
  } catch (error) {
    if (!(error instanceof ProxySettingInvalid)) throw error;
    throw new ConfigError("config_invalid_proxy", error.message, { hint: `set ${error.variable} to http://host:port (or http://USER:PASSWORD@host:port), or unset it to connect directly` });
  }
  for (const proxy of [proxies?.https, proxies?.http]) {
    const credentials = proxy ? proxyCredentials(proxy) : undefined;
    if (credentials === undefined) continue;
    secrets.add(credentials.password);
    secrets.add(`${credentials.user}:${credentials.password}`);
  }
  return proxies;
}

/** `LLLM_RETRY_DELAY_MS`: the first backoff delay, so that tests of retries through the CLI need not wait seconds. */
function retryFromEnv(env: NodeJS.ProcessEnv): Partial<RetryPolicy> {
  const text = nonEmpty(env["LLLM_RETRY_DELAY_MS"]);
  if (text === undefined) return {};
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) throw new ConfigError("config_invalid_retry_delay", `LLLM_RETRY_DELAY_MS must be a number of milliseconds >= 0, got \`${text}\``);
  return { baseDelayMs: value, maxDelayMs: Math.max(value, value * 16) };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
