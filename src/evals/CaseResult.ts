import type { AssertionOutcome } from "./checkAssertion.js";
import type { CaseError } from "./CaseRun.js";

/** How a case ran: replayed from its cassette, or live (`record`: live, and its cassette written). */
export type CaseMode = "replay" | "live" | "record";

/** Why a case failed, besides its assertions. */
export interface CaseProblem {
  /** `error`: the run failed unexpectedly; `expectation`: `expect-error`/`expect-exit` did not hold; `diverged`: the replay left the cassette; `no_cassette`: `--offline` without one. */
  kind: "error" | "expectation" | "diverged" | "no_cassette";
  message: string;
  /** What to do about it (how to re-record, how to record). */
  hint?: string;
}

/** The outcome of one case: what a reporter reports. */
export interface CaseResult {
  /** The test file, as messages show it. */
  file: string;
  name: string;
  status: "passed" | "failed" | "skipped";
  mode: CaseMode;
  /** Why it was skipped (`--bail` after a failure, Ctrl-C). */
  skipReason?: string;
  problem?: CaseProblem;
  /** The assertions of the reported run (the first failing one of a `repeat`, else the last). */
  assertions: AssertionOutcome[];
  /** Weighted share of the assertions that passed, 0 to 1. */
  score: number;
  /** How a run failed (an expected error too). */
  error: CaseError | null;
  /** `repeat`: how many runs passed, of how many, and the share needed. */
  repeat?: { runs: number; passed: number; threshold: number };
  /** The run store's ids of the case's runs (one per turn and repetition), when recorded. */
  runIds: string[];
  /** The cassette read or written. */
  cassette?: string;
  durationMs: number;
  usage: { promptTokens: number; completionTokens: number; totalTokens: number; llmCalls: number };
  /** US dollars; `null` when a model's price is unknown. */
  cost: number | null;
}
