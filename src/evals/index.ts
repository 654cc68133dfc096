import type { RunTestsOptions, TestRun } from "./runTests.js";

export type { RunTestsOptions, TestRun } from "./runTests.js";
export type { Reporter, TestRunStart, TestRunSummary } from "./reporters/Reporter.js";
export type { CaseResult, CaseMode, CaseProblem } from "./CaseResult.js";
export type { AssertionOutcome } from "./checkAssertion.js";
export { textReporter, type TextReporterOptions } from "./reporters/textReporter.js";
export { jsonReporter, testRunJson } from "./reporters/jsonReporter.js";
export { junitReporter, junitXml } from "./reporters/junitReporter.js";

/**
 * `lllm test` from code: run test files (replayed from their cassettes, or live), tell the reporters, and return
 * the summary (`ok` when every case passed). A bad test file, tactic or cassette throws a `ConfigError` before any
 * case runs. The runner loads on first call, so `import "lllm"` stays light.
 */
export async function runTests(options: RunTestsOptions = {}): Promise<TestRun> {
  const { runTests: run } = await import("./runTests.js");
  return run(options);
}
