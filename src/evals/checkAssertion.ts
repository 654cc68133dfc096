import type { AssertionContext, AssertionResult } from "./assertions/AssertionHandler.js";
import { ASSERTION_HANDLERS } from "./assertions/assertionHandlers.js";
import type { AssertionSpec } from "./TestFile.js";

/** An assertion's outcome in a case's report. */
export interface AssertionOutcome extends AssertionResult {
  spec: AssertionSpec;
}

/**
 * Check one assertion: its handler finds the fact, negation is applied here once for every type (`not-…`, `not:`),
 * and a handler that throws fails the assertion with the reason instead of the run. A check that could not decide
 * (`broken`) fails even when negated.
 */
export async function checkAssertion(spec: AssertionSpec, context: Omit<AssertionContext, "timeoutMs">): Promise<AssertionOutcome> {
  let result: AssertionResult;
  try {
    result = await ASSERTION_HANDLERS[spec.type](spec.value, { ...context, timeoutMs: spec.timeoutMs });
  } catch (error) {
    result = { pass: false, score: 0, reason: `the ${spec.type} check failed: ${error instanceof Error ? error.message : String(error)}`, broken: true };
  }
  if (spec.negate && !result.broken) result = { ...result, pass: !result.pass, score: 1 - result.score, ...(result.expected !== undefined ? { expected: `not ${result.expected}` } : {}) };
  return { ...result, spec };
}
