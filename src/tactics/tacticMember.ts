import { ConfigError, type SourceLocation } from "../errors.js";
import { isCodeTactic, loadTacticDefinition } from "./loadTacticDefinition.js";
import type { TacticToolSpec } from "../packageApi/tactic.js";

/**
 * The tool `pkg.tactics:name#tool` picks: one of the tools of a tactic written in code. A YAML tactic, or a name
 * the tactic does not declare, is a `tactic_member_unknown` ConfigError at the entry's line (prepareTactic checks
 * it, so `lllm validate` reports it too).
 */
export async function tacticMember(capability: { ref: string; member: string; entry: { file: string }; where?: SourceLocation | undefined }): Promise<TacticToolSpec> {
  const location = capability.where ? { location: capability.where } : {};
  if (!isCodeTactic(capability.entry.file)) {
    throw new ConfigError("tactic_member_unknown", `\`${capability.ref}#${capability.member}\`: a YAML tactic has no tools to pick`, { ...location, hint: `Use \`${capability.ref}\` to offer the whole tactic as a tool.` });
  }
  const definition = await loadTacticDefinition(capability.entry.file);
  const member = Object.hasOwn(definition.tools ?? {}, capability.member) ? definition.tools![capability.member] : undefined;
  if (!member) {
    const known = Object.keys(definition.tools ?? {});
    throw new ConfigError("tactic_member_unknown", `tactic \`${definition.name}\` has no tool \`${capability.member}\``, { ...location, hint: known.length > 0 ? `Its tools: ${known.join(", ")}.` : "It declares no tools." });
  }
  return member;
}
