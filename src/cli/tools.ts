import { packagesOrHere } from "./packagesOrHere.js";
import { ConfigError, InterruptedError, ToolError } from "../errors.js";
import { parseRef, type Registry } from "../registry/index.js";
import { FunctionCall, type FunctionTool } from "../tools/index.js";
import { stopSignal } from "./handleSignals.js";
import { loadRegistry } from "./loadRegistry.js";
import { parseJsonObjectFlag } from "./parseJsonObjectFlag.js";
import { failureJson, SCHEMA_VERSION, warn, writeErr, writeOut } from "./output.js";
import { toolFailureText } from "./toolFailureText.js";
import { firstLine } from "../util/firstLine.js";
import { escapeControlCharacters, escapeJsonControlCharacters } from "../util/escapeControlCharacters.js";

interface ToolsOptions {
  package?: string[];
  json?: boolean;
  args?: string;
  verbose?: boolean;
}

/** `lllm tools list`: every tool of the loaded packages, with the ref to use in `tools:`. */
export async function toolsListCommand(options: ToolsOptions): Promise<void> {
  const registry = await loadRegistry(packagesOrHere(options.package));
  const entries = registry.listTools();
  if (options.json) {
    const tools = entries.map((entry) => ({ ref: entry.ref, name: entry.name, package: entry.packageName, kind: entry.kind, description: entry.tool.description, file: entry.file }));
    writeOut(escapeJsonControlCharacters(JSON.stringify({ schema_version: SCHEMA_VERSION, tools }, null, 2)));
    return;
  }
  if (entries.length === 0) {
    warn("no tools found: pass --package DIR, or put packages in ./lllm_packages or $LLLM_HOME/packages");
    return;
  }
  // Names and descriptions are a package's text: no terminal escape of theirs reaches the terminal.
  const refs = entries.map((entry) => escapeControlCharacters(entry.ref, { all: true }));
  const width = Math.max(...refs.map((ref) => ref.length));
  entries.forEach((entry, index) => {
    const kind = entry.kind === "code" ? "" : ` (${entry.kind})`;
    writeOut(`${refs[index]!.padEnd(width)}  ${escapeControlCharacters(firstLine(entry.tool.description).slice(0, 100), { all: true })}${kind}`);
  });
}

/** `lllm tools show <ref>`: the tool exactly as the model sees it. */
export async function toolsShowCommand(ref: string, options: ToolsOptions): Promise<void> {
  const registry = await loadRegistry(packagesOrHere(options.package));
  const tool = await resolveToolOrTactic(registry, ref);
  writeOut(escapeJsonControlCharacters(JSON.stringify(tool.toTool(), null, 2)));
}

/** `lllm tools call <ref> --args '{…}'`: run the tool as the loop would and print what the model reads back. */
export async function toolsCallCommand(ref: string, options: ToolsOptions): Promise<void> {
  const registry = await loadRegistry(packagesOrHere(options.package));
  const tool = await resolveToolOrTactic(registry, ref);
  const args = parseJsonObjectFlag(options.args ?? "{}", { flag: "--args", code: "usage_args", example: '{"city": "Paris"}' });
  if (tool.isDeclaration) {
    throw new ConfigError("tool_not_bound", `tool \`${ref}\` is a declaration with no implementation`, { hint: `Load a package that has a tool named exactly \`${tool.name}\`.` });
  }
  const signal = stopSignal();
  const call = await tool.call(new FunctionCall({ name: tool.name, arguments: args }), { signal, cwd: process.cwd() });
  if (signal.aborted) throw signal.reason instanceof InterruptedError ? signal.reason : new InterruptedError("interrupted", "interrupted by the user");
  // What the tool returned or threw is its own text: shown with its control characters escaped (--json: as JSON).
  if (options.json) writeOut(escapeJsonControlCharacters(JSON.stringify(call.error !== undefined ? failureJson(new ToolError("tool_failed", call.error)) : { schema_version: SCHEMA_VERSION, result: call.result ?? null }, null, 2)));
  else writeOut(escapeControlCharacters(call.resultStr ?? ""));
  if (call.error !== undefined) {
    process.exitCode = 1;
    const failure = options.verbose ? toolFailureText(call) : "";
    if (failure) writeErr(escapeControlCharacters(failure));
  }
}

/** A tool ref, or a tactic ref (`pkg.tactics:name[#tool]`), which is a tool too when an agent lists it. */
async function resolveToolOrTactic(registry: Registry, ref: string): Promise<FunctionTool> {
  if (parseRef(ref)?.section === "tactics") {
    const { tacticRefTool } = await import("../tactics/packageTacticTools.js");
    return tacticRefTool(registry, ref);
  }
  return registry.resolveTool(ref).tool;
}

