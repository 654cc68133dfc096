import { readFileSync } from "node:fs";
import { parseConfigData } from "../config/parseConfigData.js";
import { parseRef, type Registry } from "../registry/index.js";
import type { FunctionTool } from "../tools/index.js";
import { firstLine } from "../util/firstLine.js";
import { isCodeTactic } from "./loadTacticDefinition.js";
import { prepareTactic } from "./prepareTactic.js";
import { tacticRunner } from "./runTactic.js";
import { tacticTool } from "./tacticTools.js";
import type { BoundCapability } from "./prepareTactic.js";
import type { TacticRunner } from "./TacticRun.js";

/**
 * Every tactic of a package as a tool, for `lllm mcp serve`: each call runs the tactic with fresh agents (models
 * and keys come from the serving side), with `runner` (default: unrecorded; the servers pass one that records each
 * call in the run log). A tactic that cannot be loaded is skipped, with the reason.
 */
export async function packageTacticTools(registry: Registry, packageName: string, options: { runner?: TacticRunner } = {}): Promise<{ tools: FunctionTool[]; skipped: Array<{ ref: string; reason: string }> }> {
  const pkg = registry.packages.get(packageName);
  const tools: FunctionTool[] = [];
  const skipped: Array<{ ref: string; reason: string }> = [];
  for (const entry of pkg ? pkg.tactics.values() : []) {
    if (isDefaultsFile(entry.file)) continue; // shared defaults that others name with `base:`: not a tactic to serve
    try {
      tools.push(await standaloneTacticTool(registry, { ref: entry.ref, kind: "tactic", entry }, options.runner));
    } catch (error) {
      skipped.push({ ref: entry.ref, reason: error instanceof Error ? firstLine(error.message) : String(error) });
    }
  }
  return { tools, skipped };
}

/** `pkg.tactics:name[#tool]` as a tool by itself (for `lllm tools show|call`), outside any run. */
export async function tacticRefTool(registry: Registry, text: string): Promise<FunctionTool> {
  const ref = parseRef(text);
  const entry = registry.resolveEntry("tactics", text);
  return standaloneTacticTool(registry, { ref: entry.ref, kind: "tactic", entry, ...(ref?.member ? { member: ref.member } : {}) });
}

async function standaloneTacticTool(registry: Registry, capability: BoundCapability, runner: TacticRunner = tacticRunner): Promise<FunctionTool> {
  const nested = await prepareTactic(capability.entry.file, { registry });
  return tacticTool({ nested, capability, options: { input: undefined }, onEvent: () => {}, runner });
}

/** A YAML tactic file with no agents, no `base` and no pattern of its own only holds defaults for others. */
export function isDefaultsFile(file: string): boolean {
  if (isCodeTactic(file)) return false;
  try {
    const data: unknown = parseConfigData(readFileSync(file, "utf8"), file);
    if (typeof data !== "object" || data === null) return false;
    return !("agent_configs" in data) && !("base" in data) && !("tactic_type" in data);
  } catch {
    return false; // unreadable: let loading report it
  }
}
