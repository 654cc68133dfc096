import type { Agent } from "../../agent/index.js";
import type { ArtifactStore, CodeActionReport } from "../../codeaction/index.js";
import type { ProxyManager } from "../../proxies/index.js";
import type { RanCell } from "../notebookFile.js";
import type { PreparedTactic } from "../prepareTactic.js";
import type { RunScope } from "../RunScope.js";
import type { RunOptions } from "../TacticRun.js";

/** What every pattern gets for one run of a tactic. */
export interface PatternContext {
  prepared: PreparedTactic;
  /** The fresh agents of this run: the ones the pattern said it uses. */
  agents: Map<string, Agent>;
  /** Template arguments: the tactic's `vars`, `--var` values, and `input`. */
  vars: Record<string, unknown>;
  /** The parsed input. */
  input: unknown;
  options: RunOptions;
  /** Closes kernels and servers the pattern starts when the run ends. */
  scope: RunScope;
  /** Where programs keep large results and files. */
  artifacts: ArtifactStore;
  /** Each agent's ProxyManager (the notebook gives its kernel CALL_API). */
  proxyManagers: ReadonlyMap<string, ProxyManager>;
  /** Filled by the notebook pattern as cells run, so that a failed run can still be written out. */
  notebookCells: RanCell[];
}

/** What a pattern answers. */
export interface PatternOutcome {
  output: unknown;
  /** A code-action run's programs and bridged calls. */
  codeAction?: CodeActionReport;
}

/** A way to run a tactic (`tactic_type`): which agents it uses, and the run. */
export interface Pattern {
  /** The agents the run uses: only these are built (their servers and kernels started). */
  agentsUsed(prepared: PreparedTactic): Set<string>;
  run(context: PatternContext): Promise<PatternOutcome>;
}
