import { isLllmError } from "../errors.js";

/** One tool call of a run, as assertions see it. */
export interface CaseToolCall {
  agent: string;
  name: string;
  arguments: Record<string, unknown>;
  /** The text the model read back. */
  result: string | null;
  error: string | null;
}

/** How a run failed. */
export interface CaseError {
  code: string;
  message: string;
  exitCode: number;
  /** The error's class and its parents' (`UnknownToolError`, `ModelBehaviorError`, `LllmError`). */
  classes: string[];
}

/** What one run of a case did (one turn of a conversation): what every assertion is checked against. */
export interface CaseRun {
  input: unknown;
  /** The answer; `null` when the run failed. */
  output: unknown;
  /** Every tool call of the run, nested tactics' included, in the order they ended. */
  toolCalls: CaseToolCall[];
  usage: { promptTokens: number; completionTokens: number; totalTokens: number; llmCalls: number };
  /** US dollars; `null` when a model's price is unknown. */
  cost: number | null;
  durationMs: number;
  error: CaseError | null;
  /** The run's id in the run store, when it was recorded. */
  runId: string | null;
}

/** The answer as text: text as is, anything else as JSON. */
export function answerText(run: CaseRun): string {
  if (typeof run.output === "string") return run.output;
  return run.output === null || run.output === undefined ? "" : JSON.stringify(run.output);
}

/** A thrown value as a case's error: code, message, exit code and class names. */
export function caseError(error: unknown): CaseError {
  const classes: string[] = [];
  for (let prototype = typeof error === "object" && error !== null ? Object.getPrototypeOf(error) : null; prototype && prototype !== Error.prototype && prototype !== Object.prototype; prototype = Object.getPrototypeOf(prototype)) {
    const name = (prototype as { constructor?: { name?: string } }).constructor?.name;
    if (name) classes.push(name);
  }
  return {
    code: isLllmError(error) ? error.code : "internal_error",
    message: error instanceof Error ? error.message : String(error),
    exitCode: isLllmError(error) ? error.exitCode : 1,
    classes,
  };
}

/** A run as JSON (snake_case, like `lllm run --json`): what `javascript` and `script` checks receive. */
export function caseRunJson(run: CaseRun): Record<string, unknown> {
  return {
    input: run.input,
    output: run.output,
    usage: { prompt_tokens: run.usage.promptTokens, completion_tokens: run.usage.completionTokens, total_tokens: run.usage.totalTokens, llm_calls: run.usage.llmCalls },
    tool_calls: run.toolCalls,
    cost: run.cost,
    duration_ms: run.durationMs,
    error: run.error ? { code: run.error.code, message: run.error.message, exit_code: run.error.exitCode } : null,
    run_id: run.runId,
  };
}
