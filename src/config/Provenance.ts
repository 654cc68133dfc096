import type { SourceLocation } from "../errors.js";
import { hasPath } from "./hasPath.js";
import type { DataPath, SourceDocument } from "./SourceDocument.js";
import type { AgentConfig, TacticConfig } from "./TacticConfig.js";

/**
 * Which file and line each value of a merged tactic came from, so that later stages (binding tools, proxies,
 * prompts) can say `file:line` for a value that was inherited through `base` or `global`.
 *
 * No per-key table is needed: merging lets the child win at every level, and a list or value it writes is taken
 * whole, so a value present in the merged result was written by the first file of the chain (child first) that has
 * the same path.
 */
export class Provenance {
  constructor(
    /** The base chain, child first. */
    private readonly documents: readonly SourceDocument[],
    private readonly config: TacticConfig,
    private readonly modelOverride: string | undefined,
  ) {}

  /** Where the value at `path` of the merged config was written; undefined when it is absent or a default. */
  locate(path: DataPath): SourceLocation | undefined {
    if (!hasPath(this.config, path)) return undefined;
    for (const document of this.documents) if (document.has(path)) return document.locate(path);
    return undefined;
  }

  /**
   * Where the value at `path` of `agent`, the merged form of `agent_configs[index]`, was written: in its own entry
   * or in `global`. Undefined when absent or set by `--model`.
   */
  locateAgent(agent: AgentConfig | undefined, index: number, path: DataPath): SourceLocation | undefined {
    if (!hasPath(agent, path)) return undefined;
    if (this.modelOverride !== undefined && path[0] === "model_name") return undefined;
    const own = this.config.agent_configs?.[index];
    return hasPath(own, path) ? this.locate(["agent_configs", index, ...path]) : this.locate(["global", ...path]);
  }
}
