import { ConfigError } from "../errors.js";
import type { ConfigProblem, SourceLocation } from "../errors.js";
import { didYouMean } from "../util/closest.js";
import { deepMerge } from "./deepMerge.js";
import type { DataPath } from "./SourceDocument.js";
import { sortProblems } from "./sortProblems.js";
import { BUILT_IN_TACTIC_TYPES } from "./TacticConfig.js";
import type { AgentConfig, AgentSettings, TacticConfig } from "./TacticConfig.js";

export interface MergeAgentsOptions {
  /** Where a path of the tactic config was written; problems point there. */
  locate: (path: DataPath) => SourceLocation | undefined;
  /** The tactic file, for problems whose key has no location of its own. */
  file: string;
  /** Every agent's model (the CLI's `--model`); makes `model_name` optional in the files. */
  modelOverride?: string;
  /** The model of agents that set none (the project settings' `model`); `modelOverride` wins over it. */
  defaultModel?: string;
}

const PROMPT_KEYS = ["system_prompt", "system_prompt_path"] as const;

/**
 * Each `agent_configs` entry with `global` deep-merged under it (mappings such as `model_args` and `proxy` merge
 * field by field; lists such as `tools` and plain values are replaced by the agent's). Throws one `ConfigError`
 * (`config_invalid`) listing every agent that lacks a name, a model or a system prompt, duplicate names, and
 * `agent` / `steps[].agent` names that match no agent.
 *
 * The system prompt is one setting written two ways: an agent that sets either kind replaces the global one of
 * either kind, so `global.system_prompt` plus an agent's `system_prompt_path` is not a conflict.
 */
export function mergeAgents(config: TacticConfig, options: MergeAgentsOptions): AgentConfig[] {
  const problems: ConfigProblem[] = [];
  const at = (path: DataPath): SourceLocation => options.locate(path) ?? options.locate([]) ?? { file: options.file };
  const global: AgentSettings = config.global ?? {};
  const entries = config.agent_configs ?? [];
  const tacticType = config.tactic_type ?? "agent";
  const builtIn = (BUILT_IN_TACTIC_TYPES as readonly string[]).includes(tacticType);

  if (entries.length === 0 && builtIn) {
    problems.push({
      message: `no agents: tactic_type \`${tacticType}\` needs \`agent_configs\` with at least one agent`,
      location: at(config.agent_configs ? ["agent_configs"] : []),
    });
  }
  const globalPrompts = PROMPT_KEYS.filter((key) => global[key] !== undefined);
  if (globalPrompts.length > 1) {
    problems.push({ message: "global sets both system_prompt and system_prompt_path: keep one", location: at(["global"]) });
  }

  const agents: AgentConfig[] = [];
  const firstIndexByName = new Map<string, number>();
  entries.forEach((entry, index) => {
    const merged = deepMerge(global, entry) as AgentSettings;
    const ownPrompts = PROMPT_KEYS.filter((key) => entry[key] !== undefined);
    // The agent's own prompt, of either kind, replaces the inherited one.
    if (ownPrompts.length > 0) for (const key of PROMPT_KEYS) if (!ownPrompts.includes(key)) delete merged[key];
    // A `model_name` list is a fallback chain: its first model is the agent's model, the rest go before `fallback_models`.
    if (Array.isArray(merged.model_name)) {
      const [first, ...rest] = merged.model_name;
      merged.model_name = first;
      if (rest.length > 0 || merged.fallback_models) merged.fallback_models = [...rest, ...(merged.fallback_models ?? [])];
    }
    if (options.modelOverride !== undefined) {
      // `--model` names the one model of every agent: no chain of the file's after it.
      if (merged.model_name !== undefined && !sameProvider(merged.model_name, options.modelOverride)) dropEndpoint(merged);
      merged.model_name = options.modelOverride;
      delete merged.fallback_models;
    } else if (merged.model_name === undefined && options.defaultModel !== undefined) merged.model_name = options.defaultModel;

    const name = typeof merged.name === "string" ? merged.name : undefined;
    const label = name === undefined ? `agent_configs[${index}]` : `agent \`${name}\` (agent_configs[${index}])`;
    const location = at(["agent_configs", index]);
    if (name === undefined) problems.push({ message: `${label} has no name: every agent needs one`, location });
    if (merged.model_name === undefined) {
      problems.push({ message: `${label} has no model_name: set it there or in global, or pass --model`, location });
    }
    if (ownPrompts.length > 1) {
      problems.push({ message: `${label} sets both system_prompt and system_prompt_path: keep one`, location });
    } else if (ownPrompts.length === 0 && globalPrompts.length === 0) {
      problems.push({ message: `${label} has no system prompt: set system_prompt or system_prompt_path there or in global`, location });
    }
    if (name !== undefined) {
      const first = firstIndexByName.get(name);
      if (first === undefined) firstIndexByName.set(name, index);
      else {
        problems.push({
          message: `duplicate agent name \`${name}\`: agent_configs[${first}] and agent_configs[${index}] must have different names`,
          location: at(["agent_configs", index, "name"]),
        });
      }
    }
    agents.push(merged as AgentConfig);
  });

  const names = [...firstIndexByName.keys()];
  const checkAgentName = (value: string | undefined, path: DataPath, what: string): void => {
    if (value === undefined || firstIndexByName.has(value)) return;
    const hint = didYouMean(value, names) || (names.length > 0 ? `agents: ${names.join(", ")}` : "");
    problems.push({ message: `${what} names agent \`${value}\`, which is not in agent_configs`, location: at(path), ...(hint ? { hint } : {}) });
  };
  checkAgentName(config.agent, ["agent"], "`agent`");
  (config.steps ?? []).forEach((step, index) => checkAgentName(step.agent, ["steps", index, "agent"], `steps[${index}].agent`));
  if (tacticType === "pipeline" && (config.steps ?? []).length === 0) {
    problems.push({ message: "tactic_type `pipeline` needs `steps`: a list of {agent, prompt, as}", location: at(["tactic_type"]) });
  }

  if (problems.length > 0) throw ConfigError.fromProblems("config_invalid", sortProblems(problems));
  return agents;
}

/** The provider prefix of a model name (`anthropic` of `anthropic/claude-…`); `""` for a name without one. */
function providerPrefix(model: string): string {
  const slash = model.indexOf("/");
  return slash < 0 ? "" : model.slice(0, slash);
}

function sameProvider(fileModel: string, override: string): boolean {
  return providerPrefix(fileModel) === providerPrefix(override);
}

/**
 * An agent's `base_url` and `api_key_env` say where the model the file names is served and with which key (as for a
 * fallback, see `chainMember`). `--model` naming another provider's model goes where its own name says: keeping the
 * file's server would send that provider's key (`ANTHROPIC_API_KEY` for `--model anthropic/…`) to a server written
 * for another model. Another model of the same provider (`--model ollama/qwen` for `ollama/llama3`, or a bare name
 * on the same custom server) keeps them, so trying another model on one's own server still works.
 */
function dropEndpoint(agent: AgentSettings): void {
  if (agent.invoker_config === undefined) return;
  const { base_url: _baseURL, api_key_env: _apiKeyEnv, ...rest } = agent.invoker_config;
  agent.invoker_config = rest;
}
