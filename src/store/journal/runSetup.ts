import { createHash } from "node:crypto";
import path from "node:path";
import type { PreparedTactic } from "../../tactics/prepareTactic.js";
import { runTree } from "../../tactics/runTree.js";
import { canonicalJson } from "../../util/canonicalJson.js";

/**
 * The digests of what a run's steps depend on, by part, named as a person reads them: the tactic (and each tactic
 * it uses as a tool), each agent's system prompt, and each tool as offered to the model (its name, description and
 * parameters). A resume compares them with those of the tactic as it is now: a changed part is what changed.
 * Limits are left out: a resumed run may be given other ones.
 */
export function runSetup(prepared: PreparedTactic): Record<string, string> {
  const parts: Record<string, string> = {};
  const root = path.dirname(prepared.tactic.file);
  for (const tactic of runTree(prepared) as PreparedTactic[]) {
    const own = tactic === prepared;
    const where = own ? "" : ` of ${path.relative(root, tactic.tactic.file) || path.basename(tactic.tactic.file)}`;
    const { limits: _limits, ...config } = tactic.tactic.config;
    parts[own ? "the tactic file" : `the tactic file${where}`] = digest(config);
    for (const agent of tactic.agents) {
      // Its settings as resolved (`global` merged in, `--model` applied): another model answers otherwise.
      parts[`the settings of agent \`${agent.name}\`${where}`] = digest(agent.config);
      parts[`the system prompt of agent \`${agent.name}\`${where}`] = digest(agent.systemPrompt.text);
      for (const { tool } of agent.tools) parts[`tool \`${tool.name}\` of agent \`${agent.name}\`${where}`] = digest(tool.toTool());
    }
  }
  return parts;
}

/** What differs between the setup a run was recorded with and the one now, as phrases; empty when nothing does. */
export function setupChanges(recorded: Readonly<Record<string, string>>, now: Readonly<Record<string, string>>): string[] {
  const changes: string[] = [];
  for (const [part, value] of Object.entries(now)) {
    if (!(part in recorded)) changes.push(`${part} is new`);
    else if (recorded[part] !== value) changes.push(`${part} changed`);
  }
  for (const part of Object.keys(recorded)) if (!(part in now)) changes.push(`${part} is gone`);
  return changes;
}

function digest(value: unknown): string {
  return createHash("sha256").update(typeof value === "string" ? value : canonicalJson(value)).digest("hex").slice(0, 16);
}
