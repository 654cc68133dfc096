import { isPlainObject } from "../../util/isPlainObject.js";

/**
 * What a tactic sent through Redis as data (a file outside any package) may not set, because a worker would give it
 * more than its own packages and defaults give: a program to start, a weaker sandbox, an address to send the
 * worker's API keys to, a file of the worker to read. Each entry names the key and why. The producer refuses such a
 * batch at submission, and a worker refuses such an announcement before it loads anything (anyone who can write to
 * the Redis can announce a batch). A tactic inside a package the worker has is the worker's own configuration, and
 * may set all of these.
 */
export function unsendableParts(config: Record<string, unknown>, model: string | null): string[] {
  const parts: string[] = [];
  if (model?.startsWith("scripted:")) parts.push("--model scripted:… (a file on the worker)");
  checkAgent(config, "", parts);
  if (isPlainObject(config.global)) checkAgent(config.global, "global.", parts);
  const agents = Array.isArray(config.agent_configs) ? config.agent_configs : [];
  agents.forEach((agent, index) => {
    if (isPlainObject(agent)) checkAgent(agent, `agent_configs[${index}].`, parts);
  });
  const sandbox = config.sandbox;
  if (isPlainObject(sandbox)) {
    if (sandbox.backend === "none") parts.push("sandbox.backend: none (model-written code without isolation on the worker)");
    if (sandbox.network !== undefined && sandbox.network !== false && sandbox.network !== "none") parts.push("sandbox.network (network access for model-written code on the worker)");
  }
  return parts;
}

function checkAgent(settings: Record<string, unknown>, where: string, parts: string[]): void {
  const servers = Array.isArray(settings.mcp_servers) ? settings.mcp_servers : [];
  servers.forEach((server, index) => {
    if (!isPlainObject(server)) return;
    if (server.command !== undefined) parts.push(`${where}mcp_servers[${index}].command (starts \`${String(server.command)}\` on the worker)`);
    // Both read variables of the worker (a token, a client secret or key) and send them to the URL the tactic chose.
    if (server.bearer_token_env !== undefined) parts.push(`${where}mcp_servers[${index}].bearer_token_env (would send a variable of the worker to a server the tactic chose)`);
    if (server.oauth !== undefined) parts.push(`${where}mcp_servers[${index}].oauth (would send the worker's client secrets to a server the tactic chose)`);
  });
  const remotes = Array.isArray(settings.remote_agents) ? settings.remote_agents : [];
  remotes.forEach((remote, index) => {
    // It reads a variable of the worker (a token) and sends it to the URL the tactic chose.
    if (isPlainObject(remote) && remote.token_env !== undefined) parts.push(`${where}remote_agents[${index}].token_env (would send a variable of the worker to an agent the tactic chose)`);
  });
  if (settings.invoker_config !== undefined) parts.push(`${where}invoker_config (would choose where the worker sends its API keys)`);
  // Every model of the chain: a list in model_name and fallback_models name files on the worker as much as one name does.
  for (const key of ["model_name", "fallback_models"] as const) {
    const names: unknown[] = Array.isArray(settings[key]) ? (settings[key] as unknown[]) : [settings[key]];
    if (names.some((name) => typeof name === "string" && name.startsWith("scripted:"))) parts.push(`${where}${key}: scripted:… (a file on the worker)`);
  }
}
