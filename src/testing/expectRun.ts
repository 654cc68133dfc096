import type { AssertionResult } from "../evals/assertions/AssertionHandler.js";
import { ASSERTION_HANDLERS } from "../evals/assertions/assertionHandlers.js";
import { caseError, type CaseRun } from "../evals/CaseRun.js";
import { ASSERTION_TYPES, type AssertionType } from "../evals/TestFile.js";
import type { Model } from "../providers/Model.js";
import type { RecordedRun } from "../run/runRecorded.js";
import type { TacticResult } from "../tactics/TacticRun.js";

/** What `expectRun` checks: a run from `runRecorded` (success or failure) or a result from `runTactic`. */
export type RunToCheck = RecordedRun | TacticResult;

export interface ExpectRunOptions {
  /** The run's input (a judge reads it). */
  input?: unknown;
  /** The model a `judge` assertion calls. */
  judgeModel?: Model;
  /** Where `javascript` and `script` checks are found and run; default the working folder. */
  folder?: string;
}

/** Thrown when an expectation fails: `expected` and `actual` let a test runner show the difference. */
export class RunAssertionError extends Error {
  override readonly name = "AssertionError";
  readonly expected: string | undefined;
  readonly actual: string | undefined;
  readonly showDiff: boolean;

  constructor(message: string, result: AssertionResult) {
    super(message);
    this.expected = result.expected;
    this.actual = result.actual;
    this.showDiff = result.expected !== undefined && result.actual !== undefined;
  }
}

/** The expectations on a run; each throws a `RunAssertionError` (with the reason) when it does not hold. */
export interface RunExpectation {
  /** The same expectations, negated. */
  readonly not: RunExpectation;
  toContain(text: string): void;
  toEqual(text: string): void;
  toMatch(pattern: string | RegExp): void;
  toHaveCalledTool(name: string, args?: Record<string, unknown>): void;
  toHaveCalledToolsInOrder(names: string[]): void;
  toHaveAtMostToolCalls(count: number): void;
  toUseAtMostTokens(tokens: number): void;
  /** At most this many US dollars (a model without a price fails). */
  toCostAtMost(dollars: number): void;
  toMatchJsonSchema(schema: Record<string, unknown>): void;
  /** Any assertion of a test file, e.g. `{judge: {rubric: "…"}}` or `{javascript: "./check.ts"}`. */
  toPass(assertion: Record<string, unknown>): Promise<void>;
}

/**
 * The assertions of `lllm test`, for people who prefer vitest (or any test runner): the same handlers, the same
 * reasons.
 *
 * ```ts
 * const run = await runRecorded(prepared, { input: "Weather in Tokyo?", createModel: () => model, warn: console.warn });
 * expectRun(run).toHaveCalledTool("get_weather", { city: "Tokyo" });
 * expectRun(run).not.toContain("error");
 * ```
 */
export function expectRun(result: RunToCheck, options: ExpectRunOptions = {}): RunExpectation {
  return expectation(toCaseRun(result, options.input), options, false);
}

function expectation(run: CaseRun, options: ExpectRunOptions, negate: boolean): RunExpectation {
  const context = {
    run,
    folder: options.folder ?? process.cwd(),
    timeoutMs: 30_000,
    judgeModel: () => {
      if (!options.judgeModel) throw new Error("a judge needs a model: expectRun(result, { judgeModel })");
      return options.judgeModel;
    },
  };
  const check = (type: AssertionType, value: unknown, label: string): void => decide(label, ASSERTION_HANDLERS[type](value, context) as AssertionResult, negate);
  return {
    get not() {
      return expectation(run, options, !negate);
    },
    toContain: (text) => check("contains", text, `contains ${JSON.stringify(text)}`),
    toEqual: (text) => check("equals", text, `equals ${JSON.stringify(text)}`),
    toMatch: (pattern) => check("regex", typeof pattern === "string" ? pattern : `/${pattern.source}/${pattern.flags}`, `regex ${String(pattern)}`),
    toHaveCalledTool: (name, args) => check("tool-called", args ? { name, args } : name, `tool-called ${name}${args ? ` ${JSON.stringify(args)}` : ""}`),
    toHaveCalledToolsInOrder: (names) => check("tool-order", names, `tool-order ${names.join(" → ")}`),
    toHaveAtMostToolCalls: (count) => check("max-tool-calls", count, `max-tool-calls ${count}`),
    toUseAtMostTokens: (tokens) => check("max-tokens", tokens, `max-tokens ${tokens}`),
    toCostAtMost: (dollars) => check("max-cost", dollars, `max-cost ${dollars}`),
    toMatchJsonSchema: (schema) => check("json-schema", schema, "json-schema"),
    toPass: async (assertion) => {
      const [key, value] = Object.entries(assertion)[0] ?? [];
      const negated = key?.startsWith("not-") ?? false;
      const type = (negated ? key!.slice(4) : key) as AssertionType;
      if (!ASSERTION_TYPES.includes(type)) throw new Error(`unknown assertion type \`${key}\`; the types are ${ASSERTION_TYPES.join(", ")}`);
      decide(String(key), await ASSERTION_HANDLERS[type](value, context), negate !== negated);
    },
  };
}

/** Throw when the result (negated or not) does not hold; a check that could not decide never holds. */
function decide(label: string, result: AssertionResult, negate: boolean): void {
  const pass = result.broken ? false : negate ? !result.pass : result.pass;
  if (!pass) throw new RunAssertionError(`expected the run ${negate ? "not " : ""}to pass ${label}: ${result.reason}`, result);
}

/** A run or a tactic's result in the form assertions read. */
function toCaseRun(result: RunToCheck, input: unknown): CaseRun {
  if ("ok" in result) {
    const usage = { promptTokens: result.usage.promptTokens, completionTokens: result.usage.completionTokens, totalTokens: result.usage.totalTokens, llmCalls: result.usage.llmCalls };
    if (!result.ok) return { input, output: null, toolCalls: [], usage, cost: result.cost, durationMs: 0, error: caseError(result.error), runId: result.runId ?? null };
    return { ...fromTacticResult(result.result, input), usage, cost: result.cost, runId: result.runId ?? null };
  }
  return fromTacticResult(result, input);
}

function fromTacticResult(result: TacticResult, input: unknown): CaseRun {
  return {
    input,
    output: result.output,
    toolCalls: result.toolCalls.map((call) => ({ agent: call.agent, name: call.name, arguments: call.arguments, result: call.result === null || call.result === undefined ? null : typeof call.result === "string" ? call.result : JSON.stringify(call.result), error: call.error })),
    usage: { ...result.usage },
    cost: null,
    durationMs: result.durationMs,
    error: null,
    runId: null,
  };
}
