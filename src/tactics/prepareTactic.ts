import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { isPlainObject } from "../util/isPlainObject.js";
import { parseConfigData } from "../config/parseConfigData.js";
import { BUILT_IN_TACTIC_TYPES, loadProjectSettings, loadTacticFile, type AgentConfig, type LoadedTactic, type ProjectSettings, type RemoteAgentConfig } from "../config/index.js";
import { collectProblems, collectProblemsAsync, ConfigError, type ConfigProblem, type SourceLocation } from "../errors.js";
import { assertProviderMcpSupported } from "../providers/assertProviderMcpSupported.js";
import { checkProviderTools } from "../providers/checkProviderTools.js";
import { Registry, type FileEntry, type ResolvedTool } from "../registry/index.js";
import { looksLikeQualifiedRef, parseRef } from "../registry/ref.js";
import { didYouMean } from "../util/closest.js";
import { isZodSchema, zodToJsonSchema } from "../tools/zodToJsonSchema.js";
import { isCodeTactic, loadTacticDefinition } from "./loadTacticDefinition.js";
import { tacticMember } from "./tacticMember.js";
import { A2A_TOOL_PREFIX, AGENT_TOOL_PREFIX, checkAgentTools, type AgentToolRef } from "./checkAgentTools.js";
import { checkModelChains, checkRequireApproval } from "./checkModelChains.js";
import { tacticLimitSource } from "./tacticLimitSource.js";
import { sandboxProblems } from "./sandboxIsolation.js";
import { unpricedModels } from "./unpricedModels.js";
import { PriceTable } from "../providers/PriceTable.js";
import { resolvePackageEntry } from "../config/packageSource.js";
import { lllmHome } from "../config/lllmHome.js";
import { installedFolderOf } from "../registry/installed/packageStore.js";

/** A tool bound for an agent, with the place in the tactic that asked for it. */
export interface BoundTool extends ResolvedTool {
  where?: SourceLocation;
}

/** A `tools:` entry that names a tactic or a proxy: resolved to its file now, turned into tools by the run. */
export interface BoundCapability {
  ref: string;
  kind: "tactic" | "proxy";
  entry: FileEntry;
  member?: string;
  where?: SourceLocation;
}

/** The system prompt of an agent: inline text, or the text of a prompt ref. */
export interface SystemPrompt {
  text: string;
  ref?: string;
  file?: string;
}

export interface BoundAgent {
  name: string;
  config: AgentConfig;
  systemPrompt: SystemPrompt;
  tools: BoundTool[];
  capabilities: BoundCapability[];
  /** Other agents of the tactic it may call as tools (`agent:<name>` in its `tools:`). */
  agentTools: AgentToolRef[];
  /** Remote A2A agents named in its `tools:` (`a2a:URL`). */
  remoteAgents: RemoteAgentConfig[];
}

export interface PreparedTactic {
  tactic: LoadedTactic;
  registry: Registry;
  agents: BoundAgent[];
  settings: ProjectSettings;
  settingsFile?: string;
  /** The `--model` override, kept so that tactics used as tools run with it too. */
  model?: string;
  /**
   * Every tactic of the run by file: this one and each `pkg.tactics:name` an agent uses as a tool, prepared once
   * and shared by the whole tree (a tactic that uses itself as a tool finds itself here).
   */
  nested: ReadonlyMap<string, PreparedTactic>;
}

export interface PrepareOptions {
  /** `--model`: every agent's model. */
  model?: string;
  /** `--package` folders, loaded besides the tactic's own `packages:`. */
  packages?: string[];
  cwd?: string;
  /** `$LLLM_HOME`; default from the environment. */
  home?: string;
  /** A registry to add to (with runtime registrations); default: a new one. */
  registry?: Registry;
}

/**
 * Load a tactic file and everything it names: project settings, packages, its `base` chain, prompts and tools.
 * Every declaration is bound to an implementation here, so a missing or ambiguous ref is reported before any
 * model is called, with the file and line that named it. All binding problems are thrown together.
 */
export async function prepareTactic(file: string, options: PrepareOptions = {}): Promise<PreparedTactic> {
  const cwd = options.cwd ?? process.cwd();
  const absolute = path.resolve(cwd, file);
  const { settings, file: settingsFile } = await loadProjectSettings(cwd);
  const registry = options.registry ?? new Registry();
  const home = options.home ?? lllmHome();
  const confine = (tacticFile: string): string | undefined => installedFolderOf(tacticFile, home);
  const flagPackages = (options.packages ?? []).map((dir) => ({ dir: resolvePackageEntry(dir, cwd), location: { file: "--package" } }));
  // A `base:` ref needs the packages before the tactic is fully loaded: load the ones the file itself lists first.
  await registry.add({
    packages: [...flagPackages, ...(settings.packages ?? []).map((dir) => ({ dir, ...(settingsFile ? { location: { file: settingsFile } } : {}) })), ...earlyPackages(absolute, confine)],
    cwd,
    ...(options.home ? { home: options.home } : {}),
  });
  const context: BindContext = { registry, cwd, settings, confine, ...(settingsFile ? { settingsFile } : {}), ...(options.model ? { model: options.model } : {}), nested: new Map(), binding: new Set() };
  return bindTactic(absolute, context);
}

/** What the tactics of one tree share while they are bound. */
interface BindContext {
  registry: Registry;
  cwd: string;
  settings: ProjectSettings;
  settingsFile?: string;
  model?: string;
  nested: Map<string, PreparedTactic>;
  /** Files being bound now, higher up the tree: a tactic that uses itself as a tool is bound once. */
  binding: Set<string>;
  /** The installed package folder a tactic file must keep its paths in (see `LoadTacticOptions.confine`). */
  confine: (file: string) => string | undefined;
}

/** Load one tactic of the tree and bind its agents, its nested tactics included; all problems are thrown together. */
async function bindTactic(absolute: string, context: BindContext): Promise<PreparedTactic> {
  const { registry, cwd, settings, settingsFile, model } = context;
  context.binding.add(absolute);
  const data = isCodeTactic(absolute) ? await codeTacticConfig(absolute, registry, cwd) : undefined;
  const tactic = await loadTacticFile(absolute, {
    ...(data !== undefined ? { data } : {}),
    resolveRef: (ref: string, from: SourceLocation) => registry.resolveEntry("tactics", ref, { where: from, ...fromPackage(registry, from.file) }).file,
    ...(model ? { modelOverride: model } : {}),
    ...(settings.model ? { defaultModel: settings.model } : {}),
    confine: context.confine,
  });
  await registry.add({ packages: tactic.packages.map((dir, index) => ({ dir, location: tactic.locate(["packages", index]) ?? { file: tactic.file } })), cwd, discover: false });

  const problems: ConfigProblem[] = [];
  const agents: BoundAgent[] = [];
  const home = fromPackage(registry, tactic.file);
  tactic.agents.forEach((config, index) => {
    const systemPrompt = collectProblems(problems, () => resolveSystemPrompt({ registry, tactic, config, index, home })) ?? { text: "" };
    const tools: BoundTool[] = [];
    const capabilities: BoundCapability[] = [];
    const agentTools: AgentToolRef[] = [];
    const remoteAgents: RemoteAgentConfig[] = [];
    (config.tools ?? []).forEach((text, toolIndex) => {
      const where = tactic.locateAgent(index, ["tools", toolIndex]);
      if (text.startsWith(AGENT_TOOL_PREFIX)) {
        agentTools.push({ agent: text.slice(AGENT_TOOL_PREFIX.length), ...(where ? { where } : {}) });
        return;
      }
      if (text.startsWith(A2A_TOOL_PREFIX)) {
        const url = text.slice(A2A_TOOL_PREFIX.length);
        if (!/^https?:\/\/\S+$/.test(url) || !URL.canParse(url)) {
          problems.push({ message: `\`${text}\` does not name an A2A agent: after \`a2a:\` comes its http(s) URL`, ...(where ? { location: where } : {}), hint: "Write a2a:http://host:port (the agent's base URL: its card is read at /.well-known/agent-card.json) or the card's own URL; for a token, use remote_agents: [{name, url, token_env}]." });
        } else remoteAgents.push({ name: new URL(url).host, url });
        return;
      }
      const options = { ...home, ...(where ? { where } : {}) };
      const ref = parseRef(text);
      if (ref?.section === "tactics" || ref?.section === "proxies") {
        const entry = collectProblems(problems, () => registry.resolveEntry(ref.section as "tactics" | "proxies", text, options));
        if (entry) capabilities.push({ ref: entry.ref, kind: ref.section === "tactics" ? "tactic" : "proxy", entry, ...(ref.member ? { member: ref.member } : {}), ...(where ? { where } : {}) });
        return;
      }
      const resolved = collectProblems(problems, () => registry.resolveTool(text, options));
      if (!resolved) return;
      if (resolved.tool.isDeclaration) {
        problems.push({
          message: `tool \`${resolved.ref}\` is a declaration with no implementation`,
          ...(where ? { location: where } : {}),
          hint: `Add a tool named exactly \`${resolved.tool.name}\` to the tools/ folder of a loaded package (list its folder in \`packages:\` or pass --package DIR); from code, registry.registerTool("${resolved.tool.name}", impl) works too.`,
        });
        return;
      }
      const clash = tools.find((existing) => existing.tool.name === resolved.tool.name);
      if (clash) {
        problems.push({ message: `agent \`${config.name}\` is offered two tools named \`${resolved.tool.name}\`: \`${clash.ref}\` and \`${resolved.ref}\``, ...(where ? { location: where } : {}), hint: "The model calls tools by name: keep one of them." });
        return;
      }
      tools.push({ ...resolved, ...(where ? { where } : {}) });
    });
    if (config.mcp_servers_list && config.mcp_servers_list.length > 0) {
      collectProblems(problems, () => {
        const where = tactic.locateAgent(index, ["mcp_servers_list"]);
        try {
          assertProviderMcpSupported(config.api_type, { agent: config.name, serverLabels: config.mcp_servers_list!.map((server) => server.server_label) });
        } catch (error) {
          if (error instanceof ConfigError && where) throw new ConfigError(error.code, error.message, { location: where, ...(error.hint ? { hint: error.hint } : {}) });
          throw error;
        }
      });
    }
    agents.push({ name: config.name, config, systemPrompt, tools, capabilities, agentTools, remoteAgents });
  });
  problems.push(...checkAgentTools(agents));
  problems.push(...checkModelChains(tactic, agents, model));
  checkTacticType(tactic, problems);
  // Its sandbox limits are read now, not when code first runs: validate sees them, and a run fails before it spends.
  problems.push(...sandboxProblems(tactic));
  await checkCodeTacticAgents(tactic, registry, problems);
  for (const capability of agents.flatMap((agent) => agent.capabilities)) {
    const { member } = capability;
    if (capability.kind === "tactic" && member !== undefined) await collectProblemsAsync(problems, () => tacticMember({ ...capability, member }));
    const file = capability.entry.file;
    if (capability.kind !== "tactic" || context.nested.has(file) || context.binding.has(file)) continue;
    await collectProblemsAsync(problems, async () => {
      await registry.add({ packages: earlyPackages(file, context.confine), cwd, discover: false });
      return bindTactic(file, context);
    });
  }
  context.binding.delete(absolute);
  const prepared: PreparedTactic = { tactic, registry, agents, settings, ...(settingsFile ? { settingsFile } : {}), ...(model ? { model } : {}), nested: context.nested };
  problems.push(...checkRequireApproval(prepared));
  // Its own cost limit counts every model of its run tree (the tactics it uses as tools were bound just above).
  if (tactic.config.limits?.max_cost !== undefined) problems.push(...unpricedModels(prepared, PriceTable.load(settings.prices), tacticLimitSource(prepared)("max_cost")));
  if (problems.length > 0) throw ConfigError.fromProblems("tactic_unbound", problems);
  // Once every tool is bound: a schema the agent's provider cannot take fails here, for validate, run and batch alike.
  checkProviderTools(agents);
  context.nested.set(absolute, prepared);
  return prepared;
}

/** The agent whose system prompt is read: its config, its place in the tactic file, and where bare refs resolve first. */
interface SystemPromptSource {
  registry: Registry;
  tactic: LoadedTactic;
  config: AgentConfig;
  /** The agent's index in `agent_configs` (for the location of an error). */
  index: number;
  /** The file whose package a bare prompt ref resolves in first. */
  home: { from?: string };
}

function resolveSystemPrompt({ registry, tactic, config, index, home }: SystemPromptSource): SystemPrompt {
  if (config.system_prompt_path === undefined) return { text: config.system_prompt ?? "" };
  const where = tactic.locateAgent(index, ["system_prompt_path"]);
  const entry = registry.resolveEntry("prompts", config.system_prompt_path, { ...home, ...(where ? { where } : {}) });
  return { ...readPrompt(entry.file), ref: entry.ref, file: entry.file };
}

/**
 * A tactic written in code is run through the same loader as a YAML one: its `config` (agents, vars…) becomes the
 * tactic file's data, with `tactic_type` naming the code tactic itself and its package loaded.
 */
async function codeTacticConfig(file: string, registry: Registry, cwd: string): Promise<Record<string, unknown>> {
  const definition = await loadTacticDefinition(file);
  const packageDir = path.dirname(path.dirname(file));
  await registry.add({ packages: [{ dir: packageDir, location: { file } }], cwd, discover: false });
  const owner = registry.packageOfFile(file);
  if (!owner || path.basename(path.dirname(file)) !== "tactics") {
    throw new ConfigError("tactic_outside_package", "a tactic written in code must live in a package's tactics/ folder", { location: { file }, hint: "Move it to <package>/tactics/, then run it as <package>.tactics:<file name>." });
  }
  const key = path.basename(file).replace(/\.[^.]+$/, "");
  const schemaOf = (value: unknown, where: string): unknown => (value === undefined ? undefined : isZodSchema(value) ? zodToJsonSchema(value, where, file) : value);
  const { tactic_type: _ignored, ...config } = definition.config ?? {};
  const data = {
    name: definition.name,
    description: definition.description,
    ...(definition.input !== undefined ? { input: schemaOf(definition.input, `tactic ${definition.name} input`) } : {}),
    ...(definition.output !== undefined ? { output: schemaOf(definition.output, `tactic ${definition.name} output`) } : {}),
    ...(definition.parameterMode ? { parameter_mode: definition.parameterMode } : {}),
    ...config,
    packages: [packageDir, ...((config.packages as string[] | undefined) ?? [])],
    tactic_type: `${owner.name}.tactics:${key}`,
  };
  return plainData(data) as Record<string, unknown>;
}

/**
 * A copy of code-given config as the loader reads data: keys whose value is `undefined` left out (a YAML file
 * cannot hold them), so that `description: undefined` is no key rather than a wrong-typed one.
 */
function plainData(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainData);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined).map(([key, item]) => [key, plainData(item)]));
}

/**
 * `tactic_type` is a built-in pattern or a package tactic ref. Anything else (`agnet`, `reactive`) would only
 * fail at run time, after the tactic validated: report it here, with the line and the closest pattern.
 */
function checkTacticType(tactic: LoadedTactic, problems: ConfigProblem[]): void {
  const type = tactic.config.tactic_type;
  if ((BUILT_IN_TACTIC_TYPES as readonly string[]).includes(type) || looksLikeQualifiedRef(type)) return;
  const suggestion = didYouMean(type, BUILT_IN_TACTIC_TYPES);
  problems.push({
    message: `unknown tactic_type \`${type}\`${suggestion ? `: ${suggestion}` : ""}`,
    location: tactic.locate(["tactic_type"]) ?? { file: tactic.file },
    hint: `The built-in patterns are ${BUILT_IN_TACTIC_TYPES.map((name) => `\`${name}\``).join(", ")}; a tactic written in code is named by ref (\`pkg.tactics:name\`).`,
  });
}

/** A code tactic's `agentGroup` must name configured agents. */
async function checkCodeTacticAgents(tactic: LoadedTactic, registry: Registry, problems: ConfigProblem[]): Promise<void> {
  if (!looksLikeQualifiedRef(tactic.config.tactic_type)) return;
  const entry = collectProblems(problems, () => registry.resolveEntry("tactics", tactic.config.tactic_type, { where: tactic.locate(["tactic_type"]) ?? { file: tactic.file } }));
  if (!entry) return;
  if (!isCodeTactic(entry.file)) {
    problems.push({ message: `tactic_type \`${tactic.config.tactic_type}\` is a YAML tactic, not a pattern`, location: tactic.locate(["tactic_type"]) ?? { file: tactic.file }, hint: "To build on a YAML tactic, name it with `base:` instead." });
    return;
  }
  const definition = await loadTacticDefinition(entry.file);
  const configured = new Set(tactic.agents.map((agent) => agent.name));
  for (const name of definition.agentGroup ?? []) {
    if (!configured.has(name)) {
      problems.push({ message: `tactic \`${definition.name}\` needs an agent named \`${name}\`, which is not configured`, location: { file: tactic.file }, hint: `Add it to agent_configs (configured: ${[...configured].join(", ") || "none"}).` });
    }
  }
}

/** A prompt file: markdown/text as is; YAML with a `prompt` key. */
export function readPrompt(file: string): { text: string } {
  const raw = readFileSync(file, "utf8");
  if (!/\.ya?ml$/.test(file)) return { text: raw.trimEnd() };
  const data: unknown = parseConfigData(raw, file);
  if (typeof data === "object" && data !== null && typeof (data as { prompt?: unknown }).prompt === "string") return { text: (data as { prompt: string }).prompt };
  throw new ConfigError("prompt_invalid", "a YAML prompt file needs a `prompt:` string", { location: { file } });
}

function fromPackage(registry: Registry, file: string): { from?: string } {
  const pkg = registry.packageOfFile(file);
  return pkg ? { from: pkg.name } : {};
}

/** The `packages:` of the top file, read loosely (the real loader reports any problem in it). */
function earlyPackages(file: string, confine: (file: string) => string | undefined): Array<{ dir: string; location: SourceLocation }> {
  // A tactic in code names its packages in its config, which codeTacticConfig loads. An installed package's tactic
  // loads its packages with the rest of its file, once they are checked to lie inside the package.
  if (!existsSync(file) || isCodeTactic(file) || confine(file) !== undefined) return [];
  try {
    const data: unknown = parseConfigData(readFileSync(file, "utf8"), file);
    const list = typeof data === "object" && data !== null ? (data as { packages?: unknown; base?: unknown }) : {};
    if (!(typeof list.base === "string" && looksLikeQualifiedRef(list.base))) return [];
    return Array.isArray(list.packages) ? list.packages.filter((dir): dir is string => typeof dir === "string").map((dir) => ({ dir: resolvePackageEntry(dir, path.dirname(file)), location: { file } })) : [];
  } catch {
    return [];
  }
}
