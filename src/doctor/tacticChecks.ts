import { chainMember, modelChain, type InvokerConfig } from "../config/TacticConfig.js";
import { modelEndpoint } from "../providers/createModel.js";
import type { PreparedTactic } from "../tactics/prepareTactic.js";
import { checkReachable } from "./checkReachable.js";
import type { DoctorCheck } from "./DoctorCheck.js";
import type { MachineNeeds } from "./machineChecks.js";

/** Where each key variable was found, for the report: the environment wins over the keys file. */
export interface KeySources {
  env: NodeJS.ProcessEnv;
  fromFile: ReadonlySet<string>;
}

/** What a tactic's own agents need from the machine (nested tactics are checked by `lllm doctor` on their files). */
export function tacticNeeds(prepared: PreparedTactic): MachineNeeds {
  const type = prepared.tactic.config.tactic_type ?? "agent";
  const runsCode =
    type === "code-action" ||
    type === "notebook" ||
    prepared.agents.some((agent) => agent.config.proxy?.exec_env === "interpreter" || agent.capabilities.some((capability) => capability.kind === "proxy") || Boolean(agent.config.tool_chain));
  return runsCode ? { python: true, sandbox: prepared.tactic.config.sandbox?.backend ?? "auto" } : { python: false };
}

/**
 * For each model of each agent's chain (model_name, then fallback_models): the key it reads (set or not, and where),
 * and its server, reached once. A missing key or base URL, or a server that does not answer, is a `fail`: a run of
 * this tactic would stop there (or, for a fallback, on the day the models before it are down).
 */
export async function tacticChecks(prepared: PreparedTactic, options: { model?: string; keys: KeySources }): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const seenKeys = new Set<string>();
  const servers = new Map<string, string>();
  for (const agent of prepared.agents) {
    // Every model of the chain: a fallback's missing key would show only on the day the first model is down.
    const chain = options.model ? [options.model] : modelChain(agent.config);
    (chain.length > 0 ? chain : [""]).forEach((model, position) => {
      // A fallback goes to its own prefix's server with its own key: the agent's base_url and api_key_env are its first model's.
      const invokerConfig = options.model || position === 0 ? agent.config.invoker_config : chainMember(agent.config, position).invoker_config;
      checks.push(...modelChecks(agent, model, invokerConfig, options.keys, seenKeys, servers));
    });
  }
  checks.push(...(await proxyKeyChecks(prepared, options.keys, seenKeys)));
  const reached = await Promise.all([...servers].map(([url, model]) => checkReachable(url, { env: options.keys.env, needed: true, what: `the server of ${model}` })));
  return [...checks, ...reached];
}

/** One model of an agent: its key (set or not, and where), once per variable; its server joins `servers`. */
function modelChecks(agent: PreparedTactic["agents"][number], model: string, invokerConfig: InvokerConfig | undefined, keys: KeySources, seenKeys: Set<string>, servers: Map<string, string>): DoctorCheck[] {
  if (model.startsWith("scripted:")) return [{ name: `model ${model}`, status: "ok", detail: `agent ${agent.name}: a scripted model (no key, no server)` }];
  try {
    const { endpoint } = modelEndpoint({
      model,
      ...(invokerConfig ? { invokerConfig } : {}),
      env: keys.env,
    });
    if (!servers.has(endpoint.baseURL)) servers.set(endpoint.baseURL, model);
    if (endpoint.apiKeyEnv === undefined || seenKeys.has(endpoint.apiKeyEnv)) return [];
    seenKeys.add(endpoint.apiKeyEnv);
    const source = keys.fromFile.has(endpoint.apiKeyEnv) ? "keys file" : "environment";
    return [
      endpoint.apiKey !== undefined
        ? { name: `key ${endpoint.apiKeyEnv}`, status: "ok", detail: `set (${source}), for ${model}` }
        : { name: `key ${endpoint.apiKeyEnv}`, status: "ok", detail: `not set: optional for ${endpoint.baseURL}, which may not need one` },
    ];
  } catch (error) {
    const hint = (error as { hint?: string }).hint;
    return [{ name: `model ${model}`, status: "fail", detail: `agent ${agent.name}: ${(error as Error).message}`, ...(hint ? { fix: hint } : {}) }];
  }
}

/** The keys of the proxies the agents activate (read when the model calls them: a run would fail there). */
async function proxyKeyChecks(prepared: PreparedTactic, keys: KeySources, seen: Set<string>): Promise<DoctorCheck[]> {
  const agents = prepared.agents.filter((agent) => agent.config.proxy || agent.capabilities.some((capability) => capability.kind === "proxy"));
  if (agents.length === 0) return [];
  const { loadProxies } = await import("../registry/loadProxies.js");
  const definitions = await loadProxies(prepared.registry);
  const wanted = new Set<string>();
  for (const agent of agents) {
    const listed = agent.config.proxy?.activate_proxies ?? [];
    const named = agent.capabilities.filter((capability) => capability.kind === "proxy").map((capability) => definitions.find((definition) => definition.source?.file === capability.entry.file)?.path ?? capability.entry.key);
    // A proxy block with no list activates every proxy.
    for (const definition of definitions) if ((agent.config.proxy && listed.length === 0) || listed.includes(definition.path) || named.includes(definition.path)) wanted.add(definition.path);
  }
  const checks: DoctorCheck[] = [];
  for (const definition of definitions) {
    const variable = definition.apiKeyEnv;
    if (!wanted.has(definition.path) || variable === undefined || seen.has(variable)) continue;
    seen.add(variable);
    const set = (keys.env[variable] ?? "") !== "";
    checks.push(
      set
        ? { name: `key ${variable}`, status: "ok", detail: `set (${keys.fromFile.has(variable) ? "keys file" : "environment"}), for proxy ${definition.path}` }
        : { name: `key ${variable}`, status: "fail", detail: `not set: proxy ${definition.path} needs it`, fix: `lllm keys set ${variable}, or export ${variable}=…` },
    );
  }
  return checks;
}
