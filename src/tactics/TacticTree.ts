import type { AgentConfig, LoadedTactic, ProjectSettings } from "../config/index.js";
import type { AgentToolRef } from "./checkAgentTools.js";

/**
 * The parts of a prepared tactic that the checks run while it is being prepared read (a `PreparedTactic` is one):
 * kept apart so that those checks and `prepareTactic` do not import each other.
 */
export interface TacticTree {
  tactic: LoadedTactic;
  agents: ReadonlyArray<{
    name: string;
    config: AgentConfig;
    tools: ReadonlyArray<{ tool: { name: string } }>;
    capabilities: ReadonlyArray<{ kind: "tactic" | "proxy"; entry: { file: string; key: string }; member?: string }>;
    agentTools: readonly AgentToolRef[];
  }>;
  /** Every tactic of the run by file (see `PreparedTactic.nested`). */
  nested: ReadonlyMap<string, TacticTree>;
  settings: ProjectSettings;
  /** The `--model` override. */
  model?: string;
}
