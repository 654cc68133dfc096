import type { CaseResult } from "../CaseResult.js";
import type { Reporter, TestRunSummary } from "./Reporter.js";

/** The version of the object `lllm test --json` prints; raised when a field changes meaning or goes away. */
export const TEST_JSON_VERSION = 1;

/** `--json`: one object at the end, `{schema_version, ok, summary, cases}`, written with `write` (stdout). */
export function jsonReporter(options: { write: (text: string) => void }): Reporter {
  return {
    onRunEnd(summary) {
      options.write(`${JSON.stringify(testRunJson(summary), null, 2)}\n`);
    },
  };
}

/** A test run as JSON (snake_case, like every `--json` of lllm). */
export function testRunJson(summary: TestRunSummary): Record<string, unknown> {
  return {
    schema_version: TEST_JSON_VERSION,
    ok: summary.failed === 0 && !summary.interrupted && summary.unmatchedFilter === undefined,
    summary: {
      total: summary.results.length,
      passed: summary.passed,
      failed: summary.failed,
      skipped: summary.skipped,
      filtered_out: summary.filteredOut,
      ...(summary.unmatchedFilter !== undefined ? { unmatched_filter: summary.unmatchedFilter } : {}),
      duration_ms: summary.durationMs,
      usage: { prompt_tokens: summary.usage.promptTokens, completion_tokens: summary.usage.completionTokens, total_tokens: summary.usage.totalTokens, llm_calls: summary.usage.llmCalls },
      cost: summary.cost,
      cost_unknown_cases: summary.costUnknown,
      bailed: summary.bailed,
      interrupted: summary.interrupted,
    },
    cases: summary.results.map(caseJson),
  };
}

function caseJson(result: CaseResult): Record<string, unknown> {
  return {
    file: result.file,
    name: result.name,
    status: result.status,
    mode: result.mode,
    ...(result.skipReason !== undefined ? { skip_reason: result.skipReason } : {}),
    duration_ms: result.durationMs,
    score: result.score,
    problem: result.problem ?? null,
    error: result.error ? { code: result.error.code, message: result.error.message, exit_code: result.error.exitCode } : null,
    assertions: result.assertions.map((outcome) => ({
      assertion: outcome.spec.label,
      type: outcome.spec.type,
      negated: outcome.spec.negate,
      ...(outcome.spec.turn !== undefined ? { turn: outcome.spec.turn } : {}),
      weight: outcome.spec.weight,
      pass: outcome.pass,
      score: outcome.score,
      reason: outcome.reason,
      ...(outcome.expected !== undefined ? { expected: outcome.expected } : {}),
      ...(outcome.actual !== undefined ? { actual: outcome.actual } : {}),
    })),
    ...(result.repeat ? { repeat: result.repeat } : {}),
    usage: { prompt_tokens: result.usage.promptTokens, completion_tokens: result.usage.completionTokens, total_tokens: result.usage.totalTokens, llm_calls: result.usage.llmCalls },
    cost: result.cost,
    run_ids: result.runIds,
    cassette: result.cassette ?? null,
  };
}
