import type { LoadedTactic } from "../config/index.js";
import type { DataPath } from "../config/SourceDocument.js";
import type { SourceLocation } from "../errors.js";

/**
 * Where the `position`th model of an agent's chain is written: in a `model_name` list or in `fallback_models`, of the
 * agent's entry or of `global`. Undefined for `--model`, which is not in a file.
 */
export function modelLocation(tactic: LoadedTactic, modelOverride: string | undefined, agentIndex: number, position: number): SourceLocation | undefined {
  if (modelOverride !== undefined) return undefined;
  const own = tactic.config.agent_configs?.[agentIndex];
  const global = tactic.config.global;
  const modelBase: DataPath = own?.model_name !== undefined ? ["agent_configs", agentIndex] : ["global"];
  const written = own?.model_name ?? global?.model_name;
  const listed = Array.isArray(written) ? written.length : written === undefined ? 0 : 1;
  if (position < listed) return tactic.locate(Array.isArray(written) ? [...modelBase, "model_name", position] : [...modelBase, "model_name"]);
  const fallbackBase: DataPath = own?.fallback_models !== undefined ? ["agent_configs", agentIndex] : ["global"];
  return tactic.locate([...fallbackBase, "fallback_models", position - listed]) ?? tactic.locateAgent(agentIndex, ["model_name"]);
}
