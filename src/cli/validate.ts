import path from "node:path";
import { formatLocation } from "../errors.js";
import { prepareTactic, type PreparedTactic } from "../tactics/prepareTactic.js";
import { missingTemplateVariables } from "../tactics/templateVariables.js";
import { addFailureDetails, paint, SCHEMA_VERSION, warn, writeOut } from "./output.js";
import { resolveTacticTarget } from "./resolveTacticTarget.js";
import { warnUnknownModels } from "./models.js";
import { modelLocation } from "../tactics/modelLocation.js";
import { unusedAgents } from "../tactics/unusedAgents.js";
import { modelChain } from "../config/index.js";

interface ValidateOptions {
  model?: string;
  package?: string[];
  json?: boolean;
}

/** `lllm validate <tactic>`: everything a run would load and bind, without calling a model. */
export async function validateCommand(file: string, options: ValidateOptions): Promise<void> {
  let prepared: PreparedTactic;
  try {
    prepared = await prepareTactic(await resolveTacticTarget(file, options.package), { ...(options.model ? { model: options.model } : {}), ...(options.package ? { packages: options.package } : {}) });
    // A run that does not use a broken tool file still works, but validate is the place to hear about all of them.
    prepared.registry.assertNoBrokenFiles();
  } catch (error) {
    // Tools read stdout: with --json an invalid tactic is data too (the CLI prints the failure object with its
    // problems), besides the message on stderr and exit 2.
    addFailureDetails(error, { valid: false });
    throw error;
  }
  // As run and batch do: a near-miss model name is worth a word before the first real run (stderr, exit unchanged).
  warnUnknownModels(prepared.agents, prepared.settings.prices ?? {}, warn, { locate: (agent, position) => modelLocation(prepared.tactic, options.model, agent, position) });
  for (const name of unusedAgents(prepared)) {
    const index = prepared.agents.findIndex((agent) => agent.name === name);
    const where = prepared.tactic.locate(["agent_configs", index]);
    warn(`${where ? `${formatLocation(where)}: ` : ""}agent \`${name}\` is not used: the pattern does not run it and no agent lists \`agent:${name}\` in its tools`);
  }
  // Placeholders only --var can fill are fine at run time, but a typo would stop a run halfway: say so now.
  for (const missing of missingTemplateVariables(prepared, {})) {
    warn(`${missing.where ? `${formatLocation(missing.where)}: ` : ""}{${missing.name}} in ${missing.what} has no value here: a run needs --var ${missing.name}=…, or add it to \`vars:\``);
  }
  if (options.json) {
    writeOut(JSON.stringify(summary(prepared), null, 2));
    return;
  }
  writeOut(describe(prepared));
}

function summary(prepared: PreparedTactic): unknown {
  const { tactic } = prepared;
  return {
    schema_version: SCHEMA_VERSION,
    valid: true,
    file: tactic.file,
    name: tactic.config.name ?? null,
    tactic_type: tactic.config.tactic_type ?? "agent",
    files: tactic.files,
    packages: prepared.registry.list().map((pkg) => ({ name: pkg.name, dir: pkg.dir })),
    ...(tactic.config.limits ? { limits: tactic.config.limits } : {}),
    ...(tactic.config.require_approval ? { require_approval: tactic.config.require_approval } : {}),
    agents: prepared.agents.map((agent) => ({
      name: agent.name,
      model: agent.config.model_name ?? null,
      ...(agent.config.fallback_models && agent.config.fallback_models.length > 0 ? { fallback_models: agent.config.fallback_models } : {}),
      ...(agent.agentTools.length > 0 ? { agent_tools: agent.agentTools.map((ref) => ref.agent) } : {}),
      system_prompt: agent.systemPrompt.ref ?? "(inline)",
      tools: agent.tools.map((tool) => ({ ref: tool.ref, name: tool.tool.name })),
      capabilities: agent.capabilities.map((capability) => ({ ref: capability.ref, ...(capability.member ? { member: capability.member } : {}), kind: capability.kind })),
      ...(agent.config.tool_chain ? { tool_chain: { over: toolChainOver(agent).listed, ...(agent.config.tool_chain === true ? {} : agent.config.tool_chain) } } : {}),
    })),
  };
}

function describe(prepared: PreparedTactic): string {
  const { tactic } = prepared;
  const lines: string[] = [];
  const name = tactic.config.name ? `${tactic.config.name} ` : "";
  lines.push(`${paint("green", "ok", process.stdout)} tactic ${name}(${relative(tactic.file)})`);
  lines.push(`  type: ${tactic.config.tactic_type ?? "agent"}${tactic.files.length > 1 ? ` · base: ${tactic.files.slice(1).map(relative).join(" <- ")}` : ""}`);
  const packages = prepared.registry.list();
  lines.push(`  packages: ${packages.length === 0 ? "(none)" : packages.map((pkg) => `${pkg.name} (${relative(pkg.dir)})`).join(", ")}`);
  const limits = Object.entries(tactic.config.limits ?? {});
  if (limits.length > 0) lines.push(`  limits: ${limits.map(([name, value]) => `${name} ${value}`).join(", ")}`);
  if (tactic.config.require_approval?.length) lines.push(`  require approval: ${tactic.config.require_approval.join(", ")}`);
  for (const agent of prepared.agents) {
    lines.push(`  agent ${agent.name}`);
    lines.push(`    model: ${modelChain(agent.config).join(" -> ") || "(none)"}`);
    lines.push(`    system prompt: ${agent.systemPrompt.ref ?? "inline"}`);
    const tools = agent.tools.map((tool) => (tool.ref === tool.tool.name ? tool.ref : `${tool.tool.name} <- ${tool.ref}`));
    const capabilities = agent.capabilities.map((capability) => `${capability.ref}${capability.member ? `#${capability.member}` : ""} (${capability.kind})`);
    const agentTools = agent.agentTools.map((ref) => `agent:${ref.agent}`);
    const chain = agent.config.tool_chain ? [toolChainLine(agent, tactic)] : [];
    lines.push(`    tools: ${[...tools, ...capabilities, ...agentTools, ...chain].join(", ") || "(none)"}`);
    const { proxy, mcp_servers: servers, mcp_servers_list: hosted } = agent.config;
    if (proxy) lines.push(`    proxies: ${proxy.activate_proxies?.length ? proxy.activate_proxies.join(", ") : "all"}${proxy.exec_env === "interpreter" ? " (with run_python)" : ""}`);
    const mcp = [...(tactic.config.mcp_servers ?? []), ...(servers ?? [])].map((server) => `${server.name} (${server.url ?? server.command ?? "?"})`);
    if (mcp.length > 0) lines.push(`    mcp servers: ${mcp.join(", ")}`);
    if (hosted && hosted.length > 0) lines.push(`    provider mcp: ${hosted.map((server) => server.server_label).join(", ")}`);
    // A2A agents become tools once their cards are read (at the run's start): named here by where they are.
    const remote = new Map([...(tactic.config.remote_agents ?? []), ...(agent.config.remote_agents ?? []), ...agent.remoteAgents].map((entry) => [entry.name, entry.url]));
    if (remote.size > 0) lines.push(`    remote agents: ${[...remote].map(([name, url]) => `${name} (${url})`).join(", ")}`);
  }
  return lines.join("\n");
}

type BoundAgentOf = PreparedTactic["agents"][number];

/**
 * What an agent's `tool_chain` scripts may call: its other tools, as named in the tools line (`listed`), and the
 * kinds of tools only a run knows (`later`: its MCP servers', remote agents' and proxies').
 */
function toolChainOver(agent: BoundAgentOf, tactic?: PreparedTactic["tactic"]): { listed: string[]; later: string[] } {
  const listed = [
    ...agent.tools.map((tool) => tool.tool.name),
    ...agent.capabilities.filter((capability) => capability.kind === "tactic").map((capability) => `${capability.ref}${capability.member ? `#${capability.member}` : ""}`),
    ...agent.agentTools.map((ref) => `agent:${ref.agent}`),
  ];
  const later: string[] = [];
  if ((tactic?.config.mcp_servers?.length ?? 0) > 0 || (agent.config.mcp_servers?.length ?? 0) > 0) later.push("its MCP servers' tools");
  if ((tactic?.config.remote_agents?.length ?? 0) > 0 || (agent.config.remote_agents?.length ?? 0) > 0 || agent.remoteAgents.length > 0) later.push("its remote agents");
  if (agent.config.proxy !== undefined || agent.capabilities.some((capability) => capability.kind === "proxy")) later.push("its proxy tools");
  return { listed, later };
}

/** `tool_chain (programs over: a, b; timeout 20 s, max_tool_calls 57)`: the tool, what its scripts call, its settings. */
function toolChainLine(agent: BoundAgentOf, tactic?: PreparedTactic["tactic"]): string {
  const { listed, later } = toolChainOver(agent, tactic);
  const over = [...listed, ...later];
  const config = agent.config.tool_chain;
  const settings = config && config !== true ? [...(config.timeout !== undefined ? [`timeout ${config.timeout} s`] : []), ...(config.max_tool_calls !== undefined ? [`max_tool_calls ${config.max_tool_calls}`] : [])] : [];
  return `tool_chain (programs over: ${over.join(", ") || "no other tool"}${settings.length > 0 ? `; ${settings.join(", ")}` : ""})`;
}

function relative(file: string): string {
  const result = path.relative(process.cwd(), file);
  return result === "" ? "." : result.startsWith("../..") ? file : result;
}
