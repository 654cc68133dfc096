import path from "node:path";
import { ConfigError, formatLocation } from "../errors.js";
import { prepareTactic, type PreparedTactic } from "../tactics/prepareTactic.js";
import { missingTemplateVariables } from "../tactics/templateVariables.js";
import { paint, warn, writeOut } from "./output.js";
import { resolveTacticTarget } from "./resolveTacticTarget.js";

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
  } catch (error) {
    // Tools read stdout: with --json an invalid tactic is data too, besides the message on stderr and exit 2.
    if (options.json && error instanceof ConfigError) writeOut(JSON.stringify(invalid(error), null, 2));
    throw error;
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

function invalid(error: ConfigError): unknown {
  return {
    valid: false,
    // Only the first problems are kept (ConfigError.problems); the count says how many there were.
    ...(error.problemCount > error.problems.length ? { problem_count: error.problemCount } : {}),
    problems: error.problems.map((problem) => ({
      message: problem.message,
      ...(problem.location ? { file: problem.location.file, line: problem.location.line ?? null, column: problem.location.column ?? null } : {}),
      ...(problem.hint ? { hint: problem.hint } : {}),
    })),
  };
}

function summary(prepared: PreparedTactic): unknown {
  const { tactic } = prepared;
  return {
    valid: true,
    file: tactic.file,
    name: tactic.config.name ?? null,
    tactic_type: tactic.config.tactic_type ?? "agent",
    files: tactic.files,
    packages: prepared.registry.list().map((pkg) => ({ name: pkg.name, dir: pkg.dir })),
    agents: prepared.agents.map((agent) => ({
      name: agent.name,
      model: agent.config.model_name ?? null,
      system_prompt: agent.systemPrompt.ref ?? "(inline)",
      tools: agent.tools.map((tool) => ({ ref: tool.ref, name: tool.tool.name })),
      capabilities: agent.capabilities.map((capability) => ({ ref: capability.ref, ...(capability.member ? { member: capability.member } : {}), kind: capability.kind })),
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
  for (const agent of prepared.agents) {
    lines.push(`  agent ${agent.name}`);
    lines.push(`    model: ${agent.config.model_name ?? "(none)"}`);
    lines.push(`    system prompt: ${agent.systemPrompt.ref ?? "inline"}`);
    const tools = agent.tools.map((tool) => (tool.ref === tool.tool.name ? tool.ref : `${tool.tool.name} <- ${tool.ref}`));
    const capabilities = agent.capabilities.map((capability) => `${capability.ref}${capability.member ? `#${capability.member}` : ""} (${capability.kind})`);
    lines.push(`    tools: ${[...tools, ...capabilities].join(", ") || "(none)"}`);
    const { proxy, mcp_servers: servers, mcp_servers_list: hosted } = agent.config;
    if (proxy) lines.push(`    proxies: ${proxy.activate_proxies?.length ? proxy.activate_proxies.join(", ") : "all"}${proxy.exec_env === "interpreter" ? " (with run_python)" : ""}`);
    const mcp = [...(tactic.config.mcp_servers ?? []), ...(servers ?? [])].map((server) => `${server.name} (${server.url ?? server.command ?? "?"})`);
    if (mcp.length > 0) lines.push(`    mcp servers: ${mcp.join(", ")}`);
    if (hosted && hosted.length > 0) lines.push(`    provider mcp: ${hosted.map((server) => server.server_label).join(", ")}`);
  }
  return lines.join("\n");
}

function relative(file: string): string {
  const result = path.relative(process.cwd(), file);
  return result === "" ? "." : result.startsWith("../..") ? file : result;
}
