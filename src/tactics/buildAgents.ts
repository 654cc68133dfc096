import path from "node:path";
import { Agent, type AgentEvent } from "../agent/index.js";
import { chainMember, modelChain, replySizeBytes, type AgentConfig, type McpServerConfig, type ProxyConfig, type RemoteAgentConfig } from "../config/index.js";
import type { ProxyDefinition, ProxyManager } from "../proxies/index.js";
import { ConfigError } from "../errors.js";
import { MCP } from "../mcp/MCP.js";
import { expandServerEnv } from "../mcp/expandServerEnv.js";
import type { McpConnections } from "../mcp/McpConnections.js";
import { FunctionTool } from "../tools/index.js";
import { Prompt } from "../prompts/index.js";
import type { Model } from "../providers/Model.js";
import { FallbackModel, fallbackMessage } from "../providers/FallbackModel.js";
import type { BoundCapability, PreparedTactic } from "./prepareTactic.js";
import { tacticTool } from "./tacticTools.js";
import { agentTool } from "./agentTool.js";
import { hasMcpServers, localToolNames, unofferedApprovals } from "./checkModelChains.js";
import { mcpSamplingHook } from "./mcpSamplingHook.js";
import type { RunBudget } from "../limits/index.js";
import { isolationOrigin, sandboxIsolation, sandboxLocator } from "./sandboxIsolation.js";
import type { RunScope } from "./RunScope.js";
import { defaultModel, modelTimeoutSeconds } from "./runModels.js";
import type { RunOptions, TacticRunner } from "./TacticRun.js";
import type { ToolChainRun } from "./toolChainFor.js";

/** What a run gives the agents it builds. */
export interface BuildAgentsOptions {
  prepared: PreparedTactic;
  /** The run's options (models, `--max-steps`, environment). */
  options: RunOptions;
  /** Every agent event of the run. */
  onEvent: (event: AgentEvent) => void;
  /** Closes the agents' kernels and MCP servers when the run ends. */
  scope: RunScope;
  /** Runs the tactics agents use as tools. */
  runner: TacticRunner;
  /** Build only these agents (the ones the pattern uses); default all. */
  only?: ReadonlySet<string>;
  /** For agents with `tool_chain`: the run's artifacts and report. */
  toolChain?: ToolChainRun;
  /** Filled with each agent's ProxyManager (the notebook pattern gives its kernel CALL_API). */
  proxyManagers?: Map<string, ProxyManager>;
}

/**
 * Fresh agents for one run (seed Step 15: every tactic call builds fresh agents, so nothing leaks between runs).
 * Agents with the same model configuration share one model client.
 */
export async function buildAgents({ prepared, options, onEvent, scope, runner, only, toolChain, proxyManagers }: BuildAgentsOptions): Promise<Map<string, Agent>> {
  const models = new Map<string, Promise<Model>>();
  const makeModel = (config: AgentConfig): Promise<Model> => {
    const key = JSON.stringify([config.model_name, config.api_type, config.invoker, config.invoker_config, modelTimeoutSeconds(config, options)]);
    let model = models.get(key);
    if (!model) {
      model = Promise.resolve(options.createModel ? options.createModel(config) : defaultModel(config, options, replySizeBytes(prepared.settings.reply_size)));
      models.set(key, model);
    }
    return model;
  };
  const { budget } = options;
  /** The name an agent goes by in everything the run reports: `<tool>/<agent>` inside a tactic used as a tool. */
  const runName = (agent: string): string => `${options.agentPrefix ?? ""}${agent}`;
  /**
   * The agent's model: each model of its chain counted by the run's budget under the agent's name, and a chain of
   * more than one as a FallbackModel (one per agent: which model answers is the agent's own state).
   */
  const agentModel = async (config: AgentConfig, scope: RunBudget | undefined = budget): Promise<Model> => {
    const name = runName(config.name);
    // Each model of the chain with its own settings: base_url and api_key_env are the first model's (see chainMember).
    const chain = await Promise.all(modelChain(config).map((_, position) => makeModel(chainMember(config, position))));
    // A dry run sends nothing: nothing to count, and no price needed.
    const counted = scope && !options.dryRun ? chain.map((model) => scope.guardModel(model, name)) : chain;
    if (counted.length === 1) return counted[0]!;
    return new FallbackModel({
      models: counted,
      onFallback: (notice) => (options.onModelFallback ? options.onModelFallback({ ...notice, agent: name }) : onEvent({ type: "warning", agent: name, message: fallbackMessage(notice) })),
    });
  };
  const needsApproval = new Set(prepared.tactic.config.require_approval ?? []);
  /** Every tool the agents built here are offered (MCP servers' included): what `require_approval` may name. */
  const offered = new Set<string>();
  const agents = new Map<string, Agent>();
  let connections: McpConnections | undefined;
  let definitions: ProxyDefinition[] | undefined;
  for (const bound of prepared.agents) {
    if (only && !only.has(bound.name)) continue; // servers and kernels start only for agents the pattern uses
    const { config } = bound;
    const tools = bound.tools.map((entry) => entry.tool);
    const servers = mcpServersOf(prepared, config, options.env ?? process.env);
    if (servers.length > 0) {
      if (!connections) {
        // Loaded only when a tactic has MCP servers: the SDK is the heaviest dependency of a run.
        const { McpConnections } = await import("../mcp/McpConnections.js");
        // Servers' sampling requests are answered with the model of the first agent that uses MCP servers, and
        // reported as that agent's model calls (under a name of their own), so the run counts, records and prices them.
        const agent = `${runName(bound.name)} (MCP sampling)`;
        // Counted by the run's budget like every model call: sampling cannot go past max_cost or max_tokens.
        const unguarded = await makeModel(config);
        const model = budget && !options.dryRun ? budget.guardModel(unguarded, agent) : unguarded;
        const sample = mcpSamplingHook(model, { agent, signal: options.signal, onEvent });
        const created = new McpConnections({
          cwd: path.dirname(prepared.tactic.file),
          hooks: { sample: (request) => sample(request), ...(options.env ? { env: options.env } : {}), ...(options.signal ? { signal: options.signal } : {}), ...options.mcpHooks },
        });
        scope.defer(() => created.closeAll());
        connections = created;
      }
      for (const server of servers) {
        addTools(tools, await connections.get(server), { agent: bound.name, source: `MCP server \`${server.name}\``, hint: "Give the server a `prefix` (e.g. `prefix: fs_`) or list only the tools you need in `allowed_tools`." });
      }
    }
    const remotes = remoteAgentsOf(prepared, config, bound.remoteAgents);
    if (remotes.length > 0) {
      // Loaded only when a tactic calls remote agents: the A2A SDK (and fetch) stay out of every other run.
      const { remoteAgentTools } = await import("../a2a/remoteAgentTools.js");
      const onLog = options.mcpHooks?.onLog;
      for (const remote of remotes) {
        const added = await remoteAgentTools(remote, { env: options.env ?? process.env, ...(onLog ? { onProgress: ({ agent, skill, text }) => onLog({ server: agent, level: "info", logger: skill, data: text }) } : {}), ...(options.signal ? { signal: options.signal } : {}) });
        addTools(tools, added, { agent: bound.name, source: `remote agent \`${remote.name}\``, hint: "Give the remote agent a `prefix` in remote_agents (e.g. prefix: pricing_), or list only the skills you need in its `skills`." });
      }
    }
    for (const capability of bound.capabilities.filter((item) => item.kind === "tactic")) {
      const nested = prepared.nested.get(capability.entry.file);
      if (!nested) throw new Error(`tactic ${capability.ref} was not prepared with ${prepared.tactic.file}`); // prepareTactic binds every nested tactic
      addTools(tools, [await tacticTool({ nested, capability, options, onEvent, runner })], { agent: bound.name, source: `\`${capability.ref}\`` });
    }
    for (const ref of bound.agentTools) {
      const target = prepared.agents.find((agent) => agent.name === ref.agent)!; // prepareTactic checked the name
      addTools(tools, [
        agentTool({
          name: target.name,
          description: target.config.description,
          // Built when called: the agent it copies may come later in agent_configs. Its calls count under this tool.
          fresh: async () => {
            const scope = budget?.child({ tool: target.name });
            return agents.get(target.name)!.with({ model: await agentModel(target.config, scope), ...(scope ? { budget: scope } : {}) });
          },
        }),
      ], { agent: bound.name, source: `\`agent:${target.name}\`` });
    }
    let systemText = bound.systemPrompt.text;
    const wantsProxies = config.proxy !== undefined || bound.capabilities.some((capability) => capability.kind === "proxy");
    // The proxy and sandbox modules load only for agents that use proxies.
    if (wantsProxies) definitions ??= await (await import("../registry/loadProxies.js")).loadProxies(prepared.registry);
    const proxyConfig = definitions && wantsProxies ? effectiveProxyConfig(config.proxy, namedProxies(bound.capabilities, definitions)) : undefined;
    if (proxyConfig && definitions) {
      const [{ ProxyManager }, { proxyTools }, { requireIsolation }] = await Promise.all([import("../proxies/index.js"), import("./proxyTools.js"), import("../codeaction/requireIsolation.js")]);
      const manager = ProxyManager.fromConfig(proxyConfig, { proxies: definitions, ...(options.env ? { env: options.env } : {}) });
      proxyManagers?.set(bound.name, manager);
      const isolation = sandboxIsolation(prepared.tactic.config.sandbox, sandboxLocator(prepared.tactic));
      const added = proxyTools({
        manager,
        config: proxyConfig,
        // run_python runs model-written code: in a sandbox, or unisolated only when the tactic says so (checked now,
        // before any model call).
        isolation: proxyConfig.exec_env === "interpreter" ? await requireIsolation(isolation, `run_python of agent \`${bound.name}\``, isolationOrigin(prepared)) : isolation,
        scope,
        onWarning: (message) => onEvent({ type: "warning", agent: runName(bound.name), message }),
      });
      // The system prompt is a template (filled at open()); the API docs are literal text with {placeholders}.
      systemText += added.instructions.replaceAll("{", "{{").replaceAll("}", "}}");
      addTools(tools, added.tools, { agent: bound.name, source: "the proxy block" });
    }
    for (const tool of tools) offered.add(tool.name);
    // `require_approval` names tools that ask first, in the loop and from programs: marked before tool_chain takes them.
    tools.forEach((tool, index) => {
      if (needsApproval.has(tool.name) && tool.approval !== "required") tools[index] = new FunctionTool({ ...tool, approval: "required" });
    });
    // Wrapped before tool_chain takes them: its scripts' calls go through the wrapper too (a journal replays them).
    if (options.wrapTool) tools.forEach((tool, index) => (tools[index] = options.wrapTool!(tool, runName(bound.name))));
    const toolChainFor = config.tool_chain ? (await import("./toolChainFor.js")).toolChainFor : undefined;
    const chain = config.tool_chain && toolChainFor ? await toolChainFor({ prepared, agent: runName(bound.name), config: config.tool_chain, tools, options, run: toolChain, onWarning: (message) => onEvent({ type: "warning", agent: runName(bound.name), message }) }) : undefined;
    if (chain) addTools(tools, [options.wrapTool ? options.wrapTool(chain, runName(bound.name)) : chain], { agent: bound.name, source: "`tool_chain`" });
    const systemPrompt = new Prompt({
      path: bound.systemPrompt.ref ?? `${bound.name}/system`,
      prompt: systemText,
      functionList: tools,
      ...(config.mcp_servers_list ? { mcpServersList: config.mcp_servers_list.map((server) => new MCP(server)) } : {}),
    });
    agents.set(
      bound.name,
      new Agent({
        name: runName(bound.name),
        systemPrompt,
        model: await agentModel(config),
        ...(config.model_args || options.modelArgs ? { modelArgs: { ...options.modelArgs, ...config.model_args } } : {}),
        ...(options.maxSteps !== undefined ? { maxInterruptSteps: options.maxSteps } : config.max_interrupt_steps !== undefined ? { maxInterruptSteps: config.max_interrupt_steps } : {}),
        ...(config.max_exception_retry !== undefined ? { maxExceptionRetry: config.max_exception_retry } : {}),
        resolveTool: (name) => prepared.registry.resolveTool(name).tool,
        onEvent,
        toolContext: { cwd: options.cwd ?? process.cwd(), ...(options.env ? { env: options.env } : {}) },
        ...(budget ? { budget } : {}),
        ...(options.approve ? { approve: options.approve } : {}),
      }),
    );
  }
  // A tactic with MCP servers has its `require_approval` checked now that their tools are known (prepareTactic could
  // not): a misspelt name would leave the tool it meant running without a question. Not when an agent the pattern
  // does not run has servers of its own (they were not started; the tactic's are the built agents' too).
  const unbuilt = prepared.agents.filter((bound) => only !== undefined && !only.has(bound.name));
  if (needsApproval.size > 0 && hasMcpServers(prepared) && !unbuilt.some((bound) => (bound.config.mcp_servers ?? []).length > 0)) {
    const problems = unofferedApprovals(prepared.tactic, new Set([...offered, ...localToolNames(prepared, unbuilt)]));
    if (problems.length > 0) throw ConfigError.fromProblems("tactic_unbound", problems);
  }
  return agents;
}

/**
 * The agent's proxy block, with the proxies its `tools:` name (`pkg.proxies:name`) activated too. A proxy named in
 * `tools:` without a proxy block gets the interpreter, like `exec_env: interpreter`.
 */
function effectiveProxyConfig(config: ProxyConfig | undefined, named: string[]): ProxyConfig | undefined {
  if (named.length === 0) return config;
  if (!config) return { exec_env: "interpreter", activate_proxies: named };
  const listed = config.activate_proxies ?? [];
  if (listed.length === 0) return config; // an empty list already activates every proxy
  return { ...config, activate_proxies: [...new Set([...listed, ...named])] };
}

/** The activation names (`path`) of the proxies a `tools:` list names by ref. */
function namedProxies(capabilities: BoundCapability[], definitions: ProxyDefinition[]): string[] {
  return capabilities
    .filter((capability) => capability.kind === "proxy")
    .map((capability) => definitions.find((definition) => definition.source?.file === capability.entry.file)?.path ?? capability.entry.key);
}

/**
 * The agent's MCP servers: the tactic's top-level ones, then the agent's (merged with global); a name given twice
 * keeps the agent's. `${NAME}` in a server's `env` values is read from `env` (see `expandServerEnv`), each problem
 * located in the file.
 */
function mcpServersOf(prepared: PreparedTactic, config: AgentConfig, env: NodeJS.ProcessEnv): McpServerConfig[] {
  const { tactic } = prepared;
  const byName = new Map<string, McpServerConfig>();
  (tactic.config.mcp_servers ?? []).forEach((server, index) => {
    byName.set(server.name, expandServerEnv(server, env, (key) => tactic.locate(["mcp_servers", index, "env", key]) ?? { file: tactic.file }));
  });
  const agentIndex = tactic.config.agent_configs?.findIndex((agent) => agent.name === config.name) ?? -1;
  (config.mcp_servers ?? []).forEach((server, index) => {
    byName.set(server.name, expandServerEnv(server, env, (key) => (agentIndex >= 0 ? tactic.locateAgent(agentIndex, ["mcp_servers", index, "env", key]) : undefined) ?? { file: tactic.file }));
  });
  return [...byName.values()];
}

/**
 * The agent's remote A2A agents: the tactic's `remote_agents`, the agent's (merged with global), then its `a2a:URL`
 * tools; a name given twice keeps the later one.
 */
function remoteAgentsOf(prepared: PreparedTactic, config: AgentConfig, fromTools: RemoteAgentConfig[]): RemoteAgentConfig[] {
  const byName = new Map<string, RemoteAgentConfig>();
  for (const remote of [...(prepared.tactic.config.remote_agents ?? []), ...(config.remote_agents ?? []), ...fromTools]) byName.set(remote.name, remote);
  return [...byName.values()];
}

interface AddedToolsSource {
  /** The agent the tools are for. */
  agent: string;
  /** Where the added tools come from, for the error: `the proxy block`, an MCP server, a nested tactic's ref. */
  source: string;
  /** How to resolve a clash; by default: keep one of the two, or rename one. */
  hint?: string;
}

/** Add tools, refusing a second tool with a name the agent already has: the model calls tools by name. */
function addTools(tools: FunctionTool[], added: FunctionTool[], { agent, source, hint = "Keep one of the two in the agent's `tools:`, or rename one of them." }: AddedToolsSource): void {
  for (const tool of added) {
    if (tools.some((existing) => existing.name === tool.name)) {
      throw new ConfigError("tool_name_clash", `agent \`${agent}\` already has a tool named \`${tool.name}\`; ${source} offers one too`, { hint });
    }
    tools.push(tool);
  }
}
