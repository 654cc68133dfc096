import { ConfigError } from "../errors.js";
import { importModule } from "../registry/index.js";
import { toTacticDefinition, type TacticDefinition } from "../packageApi/tactic.js";
import { errorFirstLine } from "../util/firstLine.js";
import { isCodeFile } from "../util/codeFile.js";

/** True for a tactic file written in code (`tactics/*.ts|js|mjs`) rather than YAML. */
export function isCodeTactic(file: string): boolean {
  return isCodeFile(file);
}

/** The tactic a code file exports: its default export, or its only `tactic({...})` export. */
export async function loadTacticDefinition(file: string): Promise<TacticDefinition> {
  let exports: Record<string, unknown>;
  try {
    exports = await importModule(file);
  } catch (error) {
    throw new ConfigError("tactic_load", `tactic file failed to load: ${errorFirstLine(error)}`, { location: { file } });
  }
  const found = toTacticDefinition(exports.default) ? [toTacticDefinition(exports.default)!] : Object.values(exports).flatMap((value) => (toTacticDefinition(value) ? [toTacticDefinition(value)!] : []));
  if (found.length === 1) return found[0]!;
  throw new ConfigError("tactic_not_exported", found.length === 0 ? "the file exports no tactic" : "the file exports several tactics and no default", {
    location: { file },
    hint: 'Export one: `export default tactic({ name, description, agentGroup, call })` (import { tactic } from "lllm").',
  });
}
