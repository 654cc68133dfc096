import type { CaseResult } from "../CaseResult.js";

/** What is known when the cases start. */
export interface TestRunStart {
  files: number;
  cases: number;
  /** How many cases replay a cassette, run live, and are recorded. */
  modes: { replay: number; live: number; record: number };
  /** `--offline`: the cases counted as `live` have no cassette and fail without calling a model. */
  offline?: boolean;
  concurrency: number;
}

/** The outcome of a whole test run. */
export interface TestRunSummary {
  /** Every case, in file and case order. */
  results: CaseResult[];
  passed: number;
  failed: number;
  skipped: number;
  durationMs: number;
  /** US dollars over the cases whose cost is known; `costUnknown` cases have a model without a price. */
  cost: number;
  costUnknown: number;
  usage: { promptTokens: number; completionTokens: number; totalTokens: number; llmCalls: number };
  /** `--bail` stopped the run after a failure. */
  bailed: boolean;
  interrupted: boolean;
  /** Cases left out by `--filter`. */
  filteredOut: number;
  /** The `--filter` given, when it matched no case (a failed run, as in jest and vitest). */
  unmatchedFilter?: string;
}

/**
 * What a reporter is told (vitest's reporter hooks, in small): the run starts, each case ends (in the order they
 * end), the run ends. A reporter formats; it never runs anything, and the runner never formats.
 */
export interface Reporter {
  onRunStart?(start: TestRunStart): void;
  onCaseResult?(result: CaseResult): void;
  onRunEnd?(summary: TestRunSummary): void | Promise<void>;
}
