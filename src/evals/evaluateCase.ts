import type { Model } from "../providers/Model.js";
import type { CaseProblem } from "./CaseResult.js";
import type { CaseRun } from "./CaseRun.js";
import { checkAssertion, type AssertionOutcome } from "./checkAssertion.js";
import type { TestCase } from "./TestFile.js";

/** What one run of a case (its turns) came to. */
export interface Evaluation {
  pass: boolean;
  problem?: CaseProblem;
  assertions: AssertionOutcome[];
  /** Weighted share of the assertions that passed. */
  score: number;
}

export interface EvaluateOptions {
  /** The test file's folder (checks' paths and programs). */
  folder: string;
  judgeModel: (model: string | undefined) => Model;
  /** The runs replayed a cassette: a replay error means the cassette no longer fits. */
  replayed: boolean;
  /** How to record the case again, for a replay that diverged. */
  rerecordHint: string;
  signal?: AbortSignal;
}

/** Errors of a replay that left its cassette: the code now asks the model what was not recorded. */
const REPLAY_ERRORS = ["provider_replay_diverged", "provider_script_exhausted", "provider_script_no_agent"];

/**
 * Decide a case from its runs: a replay that diverged fails at once (nothing it did can be trusted); then the
 * expected outcome (`expect-error`, `expect-exit`, or else an answer); then every assertion, each about its turn
 * (the last by default). The case passes when all of them hold.
 */
export async function evaluateCase(testCase: TestCase, runs: CaseRun[], options: EvaluateOptions): Promise<Evaluation> {
  const last = runs.at(-1)!;
  if (options.replayed && last.error && REPLAY_ERRORS.includes(last.error.code)) {
    return { pass: false, problem: { kind: "diverged", message: last.error.message, hint: options.rerecordHint }, assertions: [], score: 0 };
  }
  const problem = expectationProblem(testCase, last, runs.length);
  // Stopped (Ctrl-C): the run is not what the case is about, and no check should start now.
  if (options.signal?.aborted) return { pass: false, ...(problem ? { problem } : {}), assertions: [], score: 0 };
  const assertions: AssertionOutcome[] = [];
  for (const spec of testCase.assertions) {
    const turn = spec.turn ?? testCase.inputs.length;
    const run = runs[turn - 1];
    if (!run) {
      assertions.push({ spec, pass: false, score: 0, reason: `turn ${turn} did not run: turn ${runs.length} failed`, broken: true });
      continue;
    }
    assertions.push(await checkAssertion(spec, { run, folder: options.folder, judgeModel: options.judgeModel, ...(options.signal ? { signal: options.signal } : {}) }));
  }
  const weights = assertions.reduce((sum, outcome) => sum + outcome.spec.weight, 0);
  const score = weights === 0 ? (assertions.every((outcome) => outcome.pass) ? 1 : 0) : assertions.reduce((sum, outcome) => sum + outcome.score * outcome.spec.weight, 0) / weights;
  return { pass: problem === undefined && assertions.every((outcome) => outcome.pass), ...(problem ? { problem } : {}), assertions, score };
}

/** Whether the run ended as the case expects: with `expect-error`/`expect-exit` when given, else with an answer. */
function expectationProblem(testCase: TestCase, last: CaseRun, turnsRun: number): CaseProblem | undefined {
  const { error } = last;
  const turn = testCase.inputs.length > 1 ? ` (turn ${turnsRun} of ${testCase.inputs.length})` : "";
  if (testCase.expectError !== undefined) {
    if (!error) return { kind: "expectation", message: `expected the run to fail with ${testCase.expectError}, but it answered: ${shortText(last.output)}` };
    if (!error.classes.includes(testCase.expectError) && error.code !== testCase.expectError) {
      return { kind: "expectation", message: `expected the run to fail with ${testCase.expectError}, but it failed with ${error.classes[0] ?? "an error"} (${error.code})${turn}: ${error.message}` };
    }
  }
  if (testCase.expectExit !== undefined) {
    const exitCode = error?.exitCode ?? 0;
    if (exitCode !== testCase.expectExit) return { kind: "expectation", message: `expected exit code ${testCase.expectExit}, got ${exitCode}${error ? ` (${error.code}: ${error.message})` : ""}` };
  }
  if (error && testCase.expectError === undefined && testCase.expectExit === undefined) {
    return { kind: "error", message: `the run failed${turn}: ${error.classes[0] ?? "error"} (${error.code}): ${error.message}` };
  }
  return undefined;
}

function shortText(output: unknown): string {
  const text = typeof output === "string" ? output : JSON.stringify(output) ?? "";
  return JSON.stringify(text.length > 160 ? `${text.slice(0, 159)}…` : text);
}
