/**
 * The shapes of a tactic file, mirroring `schemas/tactic.schema.json` (keys are kept as written in the file, in
 * snake_case, so that messages, docs and files all use one spelling). The schema is the authority; these types
 * describe data that has passed it.
 */

/** The built-in run patterns; any other `tactic_type` is a package tactic ref. */
export const BUILT_IN_TACTIC_TYPES = ["agent", "pipeline", "notebook", "code-action"] as const;
/** A `tactic_type` that names a built-in pattern (anything else is a `pkg.tactics:name` ref). */
export type BuiltInTacticType = (typeof BUILT_IN_TACTIC_TYPES)[number];

/** A tactic file, after `base` merging (`base` itself is removed; `LoadedTactic.files` lists the chain). */
export interface TacticConfig {
  /** Identifier of the tactic: letters, digits, `_`, `-`. */
  name?: string;
  description?: string;
  /** The file this one extends: a path relative to it, or a package ref such as `weather.tactics:common`. */
  base?: string;
  /** Package folders; absolute once loaded (each resolved against the file that lists it). */
  packages?: string[];
  /** `agent` | `pipeline` | `notebook` | `code-action` | a package tactic ref. Defaults to `agent` when loaded. */
  tactic_type?: string;
  /** The agent the `agent` pattern runs. */
  agent?: string;
  /** JSON Schema of the input. */
  input?: Record<string, unknown>;
  /** As a tool of another tactic: one `task` parameter, or (`kwargs`) the input object's fields. */
  parameter_mode?: "task" | "kwargs";
  /** JSON Schema of the output. */
  output?: Record<string, unknown>;
  /** The turn prompt template. Defaults to `{input}` when loaded. */
  prompt?: string;
  /** The `pipeline` pattern's steps, in order. */
  steps?: PipelineStep[];
  code_action?: CodeActionConfig;
  /** The `notebook` pattern's settings (seed 000, Step 16). */
  notebook?: NotebookConfig;
  sandbox?: SandboxConfig;
  mcp_servers?: McpServerConfig[];
  /** Remote MCP servers the provider calls itself (needs `api_type: response`). */
  mcp_servers_list?: ProviderMcpServerConfig[];
  /** Remote A2A agents whose skills every agent is offered as tools. */
  remote_agents?: RemoteAgentConfig[];
  /** Defaults merged into every agent. */
  global?: AgentSettings;
  agent_configs?: Array<AgentSettings & { name: string }>;
  /** Default values of template variables. */
  vars?: Record<string, string>;
  /** Limits of the whole run (see `limits/`): dollars, tokens, tool calls, seconds. */
  limits?: LimitsConfig;
  /** Tools that need a person's yes before each call, besides those declared `approval: required`. */
  require_approval?: string[];
}

/** The `limits:` block: each limit holds for everything the run spends, nested tactics and programs included. */
export interface LimitsConfig {
  /** US dollars. */
  max_cost?: number;
  /** Prompt and answer tokens. */
  max_tokens?: number;
  /** Tool calls that run. */
  max_tool_calls?: number;
  /** Seconds from the run's start. */
  max_duration?: number;
}

/** One step of a pipeline: which agent runs, with which prompt, and the name its answer is kept under. */
export interface PipelineStep {
  agent: string;
  prompt?: string;
  as?: string;
}

/** The keys an agent entry (or `global`) may set; all optional because `global` may supply any of them. */
export interface AgentSettings {
  name?: string;
  /** What the agent does: the description of the tool `agent:<name>` offers it as. */
  description?: string;
  /**
   * e.g. `gpt-4o-mini`; `--model` overrides it for every agent. In a file it may be a list, a fallback chain:
   * once loaded it is the first model, and the others are in `fallback_models`.
   */
  model_name?: string | string[];
  /** Models that take over, in order, when the provider of `model_name` fails past its retries. */
  fallback_models?: string[];
  /** Extra request arguments (temperature, max_tokens, …), passed as they are. */
  model_args?: Record<string, unknown>;
  /** The system prompt template. Exclusive with `system_prompt_path`. */
  system_prompt?: string;
  /** A prompt ref (`pkg.prompts:name`) used as the system prompt. Exclusive with `system_prompt`. */
  system_prompt_path?: string;
  /** Tool, tactic-tool and proxy refs offered on every turn. An agent's list replaces the global one. */
  tools?: string[];
  /** Tool-call rounds allowed before the agent must answer. */
  max_interrupt_steps?: number;
  /** Retries of a failed model call or unparsable reply. */
  max_exception_retry?: number;
  /** Seconds one model request may go without progress; default 120 (`model_args.timeout` is read too). */
  timeout?: number;
  /** `completion` (chat completions) or `response` (responses API). */
  api_type?: "completion" | "response";
  /** The model client, e.g. `litellm`, `openai`. */
  invoker?: string;
  invoker_config?: InvokerConfig;
  proxy?: ProxyConfig;
  mcp_servers?: McpServerConfig[];
  /** Remote MCP servers the provider calls itself (needs `api_type: response`). */
  mcp_servers_list?: ProviderMcpServerConfig[];
  /** Remote A2A agents whose skills are offered as tools (`a2a:URL` in `tools:` is the short form). */
  remote_agents?: RemoteAgentConfig[];
  /** Give the agent the `tool_chain` tool (seed 001): `true`, or its settings. */
  tool_chain?: boolean | ToolChainConfig;
}

/** An agent after `global` has been merged in: a name, a model and exactly one kind of system prompt. */
export interface AgentConfig extends AgentSettings {
  name: string;
  /** The agent's (first) model. */
  model_name: string;
}

/** An agent's models in the order they are tried: `model_name`, then `fallback_models`. */
export function modelChain(config: { model_name?: string | string[] | undefined; fallback_models?: string[] | undefined }): string[] {
  const first = config.model_name === undefined ? [] : Array.isArray(config.model_name) ? config.model_name : [config.model_name];
  return [...first, ...(config.fallback_models ?? [])];
}

/**
 * The settings of the model at `position` in an agent's chain (see `modelChain`): the agent's own for its first model;
 * for a fallback, the same with that model's name, no chain, and no `base_url` or `api_key_env` in `invoker_config`.
 * Those say where one model's requests go and with which key: written for the first model, they would send a
 * fallback's requests (and its provider's key) to the first model's server, or that server's key to the fallback's
 * provider. A fallback goes where its own name says (its prefix's server and key variable).
 */
export function chainMember<T extends { model_name?: string | string[] | undefined; fallback_models?: string[] | undefined; invoker_config?: InvokerConfig | undefined }>(config: T, position: number): T {
  if (position === 0) return config;
  const name = modelChain(config)[position];
  if (name === undefined) throw new RangeError(`the chain has no model at position ${position}`);
  const { base_url: _baseURL, api_key_env: _apiKeyEnv, ...rest } = config.invoker_config ?? {};
  const member: T = { ...config, model_name: name, fallback_models: [] };
  if (config.invoker_config !== undefined) member.invoker_config = rest;
  return member;
}

/** Settings of the model client; unknown keys are passed through to it. */
export interface InvokerConfig {
  /** Base URL of an OpenAI-compatible endpoint. */
  base_url?: string;
  /** Name of the environment variable holding the API key. */
  api_key_env?: string;
  [key: string]: unknown;
}

/** An agent's data-API proxies (seed 000, Step 14). Agents override the global block field by field. */
export interface ProxyConfig {
  /** Proxies to load; empty means all registered proxies. */
  activate_proxies?: string[];
  /** Passed to each proxy instance. */
  deploy_mode?: boolean;
  /** ISO date (YYYY-MM-DD) for proxies that restrict data by date. */
  cutoff_date?: string | null;
  /** `interpreter` adds `run_python`; anything else (or null) does not. */
  exec_env?: string | null;
  /** run_python output longer than this is truncated; 0 disables truncation. */
  max_output_chars?: number;
  /** Appended to truncated output. */
  truncation_indicator?: string;
  /** Seconds per run_python call. */
  timeout?: number;
  /** Custom instruction block; null selects the built-in one. */
  prompt_template?: string | null;
  /** Cache proxy HTTP responses on disk. */
  use_cache?: boolean;
}

/** A remote MCP server the model provider calls itself (seed Step 9). */
export interface ProviderMcpServerConfig {
  server_label: string;
  server_url: string;
  require_approval?: "never" | "always" | Record<string, unknown>;
  allowed_tools?: string[];
}

/** An MCP server: local (`command`, over stdio) or remote (`url`, over HTTP). */
/** A remote A2A agent (the Agent2Agent protocol) whose skills an agent may call as tools. */
export interface RemoteAgentConfig {
  /** Its name, in messages (and merging: an agent's entry replaces the tactic's of the same name). */
  name: string;
  /** Its base URL (the card is at `/.well-known/agent-card.json`) or its card's URL. */
  url: string;
  /** The environment variable holding the bearer token its card asks for (never printed or logged). */
  token_env?: string;
  /** Only these skills (by id) are offered; all when omitted. */
  skills?: string[];
  /** Prefix of the tools' names (default none: a tool is named after its skill). */
  prefix?: string;
  /** Seconds one call may take; default 300. The run's own limits hold besides. */
  timeout?: number;
  /** Origins besides `url`'s where the card may put its endpoint (the calls and the token go there); none by default. */
  endpoint_origins?: string[];
}

export interface McpServerConfig {
  name: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
  /** Only these tools are offered; all when omitted. */
  allowed_tools?: string[];
  /** Tools safe to call again when a resumed run finds a call cut short (by the server's names); none by default. */
  idempotent_tools?: string[];
  /** Prefix for the server's tool names. */
  prefix?: string;
  /** `url` servers: the name of an environment variable holding a bearer token (sent as `Authorization: Bearer …`). */
  bearer_token_env?: string;
  /** `url` servers: `streamable-http`, `sse` (the 2024 HTTP+SSE transport), or `auto` (default: Streamable HTTP, then SSE). */
  transport?: "auto" | "streamable-http" | "sse";
  /** `url` servers: OAuth 2.1 settings (discovery and dynamic registration need none). */
  oauth?: McpOAuthConfig;
  /** What to do when the server asks the user a question: `ask` (default; on the terminal, declined without one) or `decline`. */
  elicitation?: "ask" | "decline";
  /** Sampling requests of the server, answered with the agent's model: at most `max_requests` per run (default 10); 0 refuses them. */
  sampling?: { max_requests?: number; max_tokens?: number };
  /** Folders offered as the server's roots (relative to the tactic); none by default, so a server keeps its own. */
  roots?: string[];
}

/** OAuth settings of an MCP server reached by URL. Secrets are named by environment variable, never written here. */
export interface McpOAuthConfig {
  /** A client registered with the authorization server beforehand (otherwise lllm registers itself). */
  client_id?: string;
  /** The environment variable holding the pre-registered client's secret. */
  client_secret_env?: string;
  /** `authorization_code` (default: a browser sign-in) or `client_credentials` (a machine client, no browser). */
  grant?: "authorization_code" | "client_credentials";
  /** The environment variable holding a PEM private key, for `client_credentials` with `private_key_jwt`. */
  private_key_env?: string;
  /** The signing algorithm of that key; default ES256 (RS256 for RSA keys). */
  signing_algorithm?: string;
  /** Scopes to ask for (space-separated); default: what the server names. */
  scope?: string;
  /** A URL of lllm's client metadata document, used as the client_id where the server supports it (CIMD). */
  client_metadata_url?: string;
  /**
   * The issuer URL of the authorization server the client belongs to: its credentials go there alone, not to one the
   * MCP server names. Required with `client_credentials`.
   */
  issuer?: string;
}

/** The `code-action` pattern's budgets (seed 002). */
export interface CodeActionConfig {
  /** Seconds the program may run. */
  exec_timeout?: number;
  /** Repair attempts after a failed program. */
  max_repairs?: number;
  /** Hard cap on each program's tool calls. */
  max_tool_calls?: number;
}

/** The `notebook` pattern: cells until <TERMINATE_NOTEBOOK> or `max_steps` model turns. */
export interface NotebookConfig {
  /** Model turns at most. Default 8. */
  max_steps?: number;
}

/** The `tool_chain` tool of an agent (seed 001). */
export interface ToolChainConfig {
  /** The longest a script may run, in seconds (the `timeout` argument is capped at it). Default 60. */
  timeout?: number;
  /** Hard cap on each script's tool calls (hidden from the model). Default 50. */
  max_tool_calls?: number;
}

/** Where model-written code runs. Limits are kept as written (`"1G"` or a number); the sandbox parses them. */
export interface SandboxConfig {
  backend?: "auto" | "bwrap" | "gvisor" | "none";
  memory_limit?: string | number;
  cpu_time?: string | number;
  max_processes?: string | number;
  file_size?: string | number;
  workspace_size?: string | number;
  output_size?: string | number;
  /** Off (`false` / `"none"`) by default. */
  network?: boolean | string;
}
