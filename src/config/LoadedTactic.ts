import type { SourceLocation } from "../errors.js";
import type { DataPath } from "./SourceDocument.js";
import type { AgentConfig, TacticConfig } from "./TacticConfig.js";

/** A tactic file read, validated, merged with its `base` chain and with `global` merged into its agents. */
export interface LoadedTactic {
  /** The tactic file, absolute. */
  file: string;
  /** The `base` chain, absolute paths, child first (`files[0] === file`). */
  files: string[];
  /** The merged config; `tactic_type` (default `agent`) and `prompt` (default `{input}`) are always set. */
  config: TacticConfig & { tactic_type: string; prompt: string };
  /** The agents, in `agent_configs` order, each with `global` merged in (and `--model` applied). */
  agents: AgentConfig[];
  /** Package folders of the tactic, absolute (each resolved against the file that listed it). */
  packages: string[];
  /** Where the value at `path` of `config` was written (file:line:col); undefined when absent or a default. */
  locate(path: DataPath): SourceLocation | undefined;
  /** Where the value at `path` of `agents[index]` was written: its own entry or `global`. */
  locateAgent(index: number, path: DataPath): SourceLocation | undefined;
}
