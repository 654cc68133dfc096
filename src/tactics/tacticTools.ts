import { readFileSync } from "node:fs";
import { parseConfigData } from "../config/parseConfigData.js";
import { checkParameterSchemas } from "../tools/checkParameterSchemas.js";
import type { AgentEvent } from "../agent/index.js";
import { ConfigError } from "../errors.js";
import { FunctionTool, normalizeParameters } from "../tools/index.js";
import { isCodeTactic, loadTacticDefinition } from "./loadTacticDefinition.js";
import type { BoundCapability, PreparedTactic } from "./prepareTactic.js";
import { prepareTactic } from "./prepareTactic.js";
import { tacticAsFunction } from "./tacticAsFunction.js";
import type { RunOptions } from "./TacticRun.js";
import { parseRef, type Registry } from "../registry/index.js";

/**
 * A `pkg.tactics:name` entry of `tools:` as a tool (seed Step 8): calling it runs that tactic with fresh agents on
 * the validated input. `pkg.tactics:name#tool` picks one of a code tactic's tools instead. The nested tactic is
 * loaded and bound now, so a broken one fails before the run starts; its model calls count in the run's usage.
 */
export async function tacticTool(parent: PreparedTactic, capability: BoundCapability, options: RunOptions, onEvent: (event: AgentEvent) => void): Promise<FunctionTool> {
  return tacticFunction({ registry: parent.registry, capability, options, onEvent, ...(parent.model ? { model: parent.model } : {}) });
}

/**
 * Every tactic of a package as a tool, for `lllm mcp serve`: each call runs the tactic with fresh agents (models
 * and keys come from the serving side). A tactic that cannot be loaded is skipped, with the reason.
 */
export async function packageTacticTools(registry: Registry, packageName: string): Promise<{ tools: FunctionTool[]; skipped: Array<{ ref: string; reason: string }> }> {
  const pkg = registry.packages.get(packageName);
  const tools: FunctionTool[] = [];
  const skipped: Array<{ ref: string; reason: string }> = [];
  for (const entry of pkg ? pkg.tactics.values() : []) {
    if (isDefaultsFile(entry.file)) continue; // shared defaults that others name with `base:`: not a tactic to serve
    try {
      tools.push(await tacticFunction({ registry, capability: { ref: entry.ref, kind: "tactic", entry }, options: { input: undefined }, onEvent: () => {} }));
    } catch (error) {
      skipped.push({ ref: entry.ref, reason: error instanceof Error ? error.message.split("\n")[0]! : String(error) });
    }
  }
  return { tools, skipped };
}

/** `pkg.tactics:name[#tool]` as a tool by itself (for `lllm tools show|call`), outside any run. */
export async function tacticRefTool(registry: Registry, text: string): Promise<FunctionTool> {
  const ref = parseRef(text);
  const entry = registry.resolveEntry("tactics", text);
  return tacticFunction({ registry, capability: { ref: entry.ref, kind: "tactic", entry, ...(ref?.member ? { member: ref.member } : {}) }, options: { input: undefined }, onEvent: () => {} });
}

/** A YAML tactic file with no agents, no `base` and no pattern of its own only holds defaults for others. */
function isDefaultsFile(file: string): boolean {
  if (isCodeTactic(file)) return false;
  try {
    const data: unknown = parseConfigData(readFileSync(file, "utf8"), file);
    if (typeof data !== "object" || data === null) return false;
    return !("agent_configs" in data) && !("base" in data) && !("tactic_type" in data);
  } catch {
    return false; // unreadable: let loading report it
  }
}

interface TacticFunctionOptions {
  registry: Registry;
  capability: BoundCapability;
  options: RunOptions;
  onEvent: (event: AgentEvent) => void;
  model?: string;
}

async function tacticFunction({ registry, capability, options, onEvent, model }: TacticFunctionOptions): Promise<FunctionTool> {
  const { runTactic } = await import("./runTactic.js"); // runTactic builds agents, which build tactic tools: a cycle
  const nested = await prepareTactic(capability.entry.file, { registry, ...(model ? { model } : {}) });
  const run = (input: unknown, signal: AbortSignal | undefined): Promise<unknown> =>
    runTactic(nested, { ...options, input, ...(signal ? { signal } : {}), onEvent }).then((result) => result.output);
  const { config } = nested.tactic;
  const name = config.name ?? capability.entry.key;

  if (capability.member === undefined) {
    return tacticAsFunction({
      name,
      description: config.description ?? `Run the ${name} tactic on a task.`,
      inputSchema: config.input,
      ...(config.parameter_mode ? { parameterMode: config.parameter_mode } : {}),
      call: (input, context) => run(input, context.signal),
    });
  }
  if (!isCodeTactic(capability.entry.file)) {
    throw new ConfigError("tactic_member_unknown", `\`${capability.ref}#${capability.member}\`: a YAML tactic has no tools to pick`, { ...(capability.where ? { location: capability.where } : {}), hint: `Use \`${capability.ref}\` to offer the whole tactic as a tool.` });
  }
  const definition = await loadTacticDefinition(capability.entry.file);
  const member = Object.hasOwn(definition.tools ?? {}, capability.member) ? definition.tools![capability.member] : undefined;
  if (!member) {
    const known = Object.keys(definition.tools ?? {});
    throw new ConfigError("tactic_member_unknown", `tactic \`${definition.name}\` has no tool \`${capability.member}\``, { ...(capability.where ? { location: capability.where } : {}), hint: known.length > 0 ? `Its tools: ${known.join(", ")}.` : "It declares no tools." });
  }
  const where = `${capability.ref}#${capability.member}`;
  const parameters = normalizeParameters(member.parameters ?? {}, { where });
  checkParameterSchemas(parameters.properties, { where, file: capability.entry.file });
  return new FunctionTool({
    name: capability.member,
    description: member.description,
    ...parameters,
    run: async (args, context) => {
      // A tool method gets fresh agents like a whole call: run the tactic with a call that invokes the method.
      const { buildAgents } = await import("./buildAgents.js");
      const { RunScope } = await import("./RunScope.js");
      const scope = new RunScope();
      try {
        const agents = await buildAgents({ prepared: nested, options, onEvent, scope });
        return await member.run(args, { agents: Object.fromEntries(agents), vars: { ...(nested.tactic.config.vars ?? {}) }, ...(context.signal ? { signal: context.signal } : {}), tool: context });
      } finally {
        await scope.close();
      }
    },
  });
}
