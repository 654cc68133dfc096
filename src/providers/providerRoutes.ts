/** A provider reachable through a model-name prefix (`groq/llama3-70b`). */
export interface ProviderRoute {
  /** The prefix without its slash; `openai` is also the route of names without a known prefix. */
  prefix: string;
  /** The usual base URL; absent when it must come from `baseURLEnv` or `invoker_config.base_url`. */
  defaultBaseURL?: string;
  /** A variable that overrides the default base URL. */
  baseURLEnv?: string;
  /** The variable holding the key. */
  apiKeyEnv?: string;
  /** Another variable read for the key when `apiKeyEnv` is not set (Gemini's `GOOGLE_API_KEY`). */
  altApiKeyEnv?: string;
  /** Whether a call without the key is pointless (a hosted service) or fine (a local server). */
  keyRequired: boolean;
  /** The API it speaks: OpenAI's (default) or a provider's own, through its SDK. */
  wire?: "openai" | "anthropic" | "gemini";
}

/** The model name a server receives: a known provider prefix (`ollama/`) is the route, not part of the name. */
export function wireModelName(model: string): string {
  const slash = model.indexOf("/");
  return slash > 0 && PROVIDER_ROUTES.some((route) => route.prefix === model.slice(0, slash)) ? model.slice(slash + 1) : model;
}

/** The servers `createModel` knows by prefix, in the order they are listed to users. */
export const PROVIDER_ROUTES: readonly ProviderRoute[] = [
  { prefix: "openai", defaultBaseURL: "https://api.openai.com/v1", baseURLEnv: "OPENAI_BASE_URL", apiKeyEnv: "OPENAI_API_KEY", keyRequired: true },
  { prefix: "anthropic", defaultBaseURL: "https://api.anthropic.com", baseURLEnv: "ANTHROPIC_BASE_URL", apiKeyEnv: "ANTHROPIC_API_KEY", keyRequired: true, wire: "anthropic" },
  { prefix: "gemini", defaultBaseURL: "https://generativelanguage.googleapis.com", baseURLEnv: "GEMINI_BASE_URL", apiKeyEnv: "GEMINI_API_KEY", altApiKeyEnv: "GOOGLE_API_KEY", keyRequired: true, wire: "gemini" },
  { prefix: "ollama", defaultBaseURL: "http://localhost:11434/v1", keyRequired: false },
  { prefix: "openrouter", defaultBaseURL: "https://openrouter.ai/api/v1", apiKeyEnv: "OPENROUTER_API_KEY", keyRequired: true },
  { prefix: "groq", defaultBaseURL: "https://api.groq.com/openai/v1", apiKeyEnv: "GROQ_API_KEY", keyRequired: true },
  { prefix: "together", defaultBaseURL: "https://api.together.xyz/v1", apiKeyEnv: "TOGETHER_API_KEY", keyRequired: true },
  { prefix: "deepseek", defaultBaseURL: "https://api.deepseek.com/v1", apiKeyEnv: "DEEPSEEK_API_KEY", keyRequired: true },
  { prefix: "lmstudio", defaultBaseURL: "http://localhost:1234/v1", keyRequired: false },
  { prefix: "vllm", baseURLEnv: "VLLM_BASE_URL", apiKeyEnv: "VLLM_API_KEY", keyRequired: false },
];
