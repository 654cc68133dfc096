/**
 * Errors by who must act. Every error carries a string `code`, the CLI exit code it maps to, and a message that
 * says what failed, where, and how to fix it. The CLI prints `message` (plus `hint`), never a stack trace unless
 * `--verbose` is given.
 */

import { escapeControlCharacters } from "./util/escapeControlCharacters.js";
import type { ErrorCode } from "./errorCodes.js";
export type { ErrorCode } from "./errorCodes.js";
export { ERROR_CODES } from "./errorCodes.js";

/** A place in a user's file, used to point at the line that needs fixing. */
export interface SourceLocation {
  file: string;
  /** 1-based line. */
  line?: number;
  /** 1-based column. */
  column?: number;
}

/** `file:line:col`, or as much of it as is known. */
export function formatLocation(location: SourceLocation): string {
  let text = location.file;
  if (location.line !== undefined) {
    text += `:${location.line}`;
    if (location.column !== undefined) text += `:${location.column}`;
  }
  return text;
}

export interface LllmErrorOptions {
  /** How to fix it, printed on its own line after the message. */
  hint?: string;
  location?: SourceLocation;
  cause?: unknown;
}

/** The base of every error lllm throws on purpose. */
export class LllmError extends Error {
  /** A stable machine-readable code, e.g. `config_invalid`; every code is listed in errorCodes.ts. */
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly location: SourceLocation | undefined;
  /** The process exit code the CLI uses for this error. */
  readonly exitCode: number = 1;

  constructor(code: ErrorCode, message: string, options: LllmErrorOptions = {}) {
    // Messages quote keys and values from users' files and servers' replies: none may drive the terminal.
    super(escapeControlCharacters(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.hint = options.hint === undefined ? undefined : escapeControlCharacters(options.hint);
    this.location = options.location;
  }
}

/** How many problems a `ConfigError` keeps and prints; the rest are counted. */
export const MAX_REPORTED_PROBLEMS = 20;

/** One problem in a user's file; a `ConfigError` may carry many so that all are reported at once. */
export interface ConfigProblem {
  message: string;
  location?: SourceLocation;
  hint?: string;
}

/** The user's files or flags are wrong. Exit code 2. */
export class ConfigError extends LllmError {
  override readonly exitCode = 2;
  /** The problems found, in file order, at most the first `MAX_REPORTED_PROBLEMS`; the message summarises them. */
  readonly problems: ConfigProblem[];
  /** How many problems were found in all (more than `problems.length` when some were left out). */
  readonly problemCount: number;

  constructor(code: ErrorCode, message: string, options: LllmErrorOptions & { problems?: ConfigProblem[]; problemCount?: number } = {}) {
    super(code, message, options);
    this.problems = options.problems ?? [{ message, ...(options.location ? { location: options.location } : {}), ...(options.hint ? { hint: options.hint } : {}) }];
    this.problemCount = Math.max(options.problemCount ?? 0, this.problems.length);
  }

  /**
   * Build one error out of many problems, with one line per problem. Only the first `MAX_REPORTED_PROBLEMS` are
   * kept and printed, with a count of the rest: a file with thousands of mistakes needs its first ones fixed, not
   * megabytes of output.
   */
  static fromProblems(code: ErrorCode, problems: ConfigProblem[]): ConfigError {
    const shown = problems.slice(0, MAX_REPORTED_PROBLEMS);
    const lines = shown.map(formatProblem);
    const rest = problems.length - shown.length;
    const heading = rest > 0 ? `${problems.length} problems (the first ${shown.length} shown):` : `${problems.length} problems:`;
    const message =
      problems.length === 1
        ? lines[0]!
        : `${heading}\n${lines.map((line) => `  ${line.replaceAll("\n", "\n  ")}`).join("\n")}${rest > 0 ? `\n  … and ${rest} more problem${rest === 1 ? "" : "s"}` : ""}`;
    return new ConfigError(code, message, { problems: shown, problemCount: problems.length });
  }
}

/**
 * Run `action`, adding the problems of a ConfigError it throws to `problems` (and giving undefined) so that every
 * problem is reported at once; any other error is thrown on.
 */
export function collectProblems<T>(problems: ConfigProblem[], action: () => T): T | undefined {
  try {
    return action();
  } catch (error) {
    return addProblems(problems, error);
  }
}

/** `collectProblems` for an async action. */
export async function collectProblemsAsync<T>(problems: ConfigProblem[], action: () => Promise<T>): Promise<T | undefined> {
  try {
    return await action();
  } catch (error) {
    return addProblems(problems, error);
  }
}

function addProblems(problems: ConfigProblem[], error: unknown): undefined {
  if (!(error instanceof ConfigError)) throw error;
  problems.push(...error.problems);
  return undefined;
}

export function formatProblem(problem: ConfigProblem): string {
  const where = problem.location ? `${formatLocation(problem.location)}: ` : "";
  return `${where}${problem.message}${problem.hint ? `\n  ${problem.hint}` : ""}`;
}

/** The model did something the run cannot recover from (an unknown tool, a reply that never parses). Exit 1. */
export class ModelBehaviorError extends LllmError {}

/** A tool failed in a way that stops the run (not an error returned to the model). Exit 1. */
export class ToolError extends LllmError {}

/** The sandbox could not be started or used. Exit 1. */
export class SandboxError extends LllmError {}

/** A package could not be fetched or published: a registry that is down, refuses, or answers nonsense. Exit 1. */
export class PackageFetchError extends LllmError {}

/** The model provider failed: HTTP, auth, rate limit. Exit 1 (2 for a missing key, which is configuration). */
export class ProviderError extends LllmError {
  /**
   * The provider's HTTP status and its own words (one line, cut), when it answered: a server that passes its client's
   * request on (`lllm serve`) tells its client why the provider refused it, without the message's other parts (the
   * provider's address, the variable of its key), which are the operator's.
   */
  readonly upstream: { status: number; message: string } | undefined;

  constructor(code: ErrorCode, message: string, options: LllmErrorOptions & { upstream?: { status: number; message: string } } = {}) {
    super(code, message, options);
    this.upstream = options.upstream;
  }
}

/** A budget ran out: tool calls, steps, time. Exit 3. */
export class BudgetError extends LllmError {
  override readonly exitCode = 3;

  /**
   * Every lllm error that means a budget ran out (exit 3) is a BudgetError, also one whose family is rooted
   * elsewhere (CodeActionBudgetError is a CodeActionError, so that one handler catches every code-action failure).
   * Subclasses keep the ordinary check.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== BudgetError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return value instanceof LllmError && value.exitCode === 3;
  }
}

/** Which limit of a run stopped it (`limits:` in a tactic, `lllm run --max-cost` and its siblings). */
export type RunLimitName = "max_cost" | "max_tokens" | "max_tool_calls" | "max_duration";

/**
 * A limit of the whole run was reached: spend, tokens, tool calls or time, counted over every agent, nested tactic,
 * program and judge of the run. It stops the run wherever it is raised: a tool that meets it (a nested tactic, a
 * program's bridged call) does not fail for the model to read, the whole run does. Exit 3.
 */
export class RunLimitError extends BudgetError {
  /** The limit that was reached. */
  readonly limit: RunLimitName;
  /** Its value: dollars, tokens, calls or seconds. */
  readonly value: number;
  /** What had been spent of it when the run stopped (same unit). */
  readonly spent: number;

  constructor(code: ErrorCode, message: string, options: LllmErrorOptions & { limit: RunLimitName; value: number; spent: number }) {
    super(code, message, options);
    this.limit = options.limit;
    this.value = options.value;
    this.spent = options.spent;
  }
}

/** The user interrupted the run (Ctrl-C). Exit 130. */
export class InterruptedError extends LllmError {
  /** 128 + the signal's number: 130 for Ctrl-C (SIGINT, the default), 143 for SIGTERM. */
  override readonly exitCode: number;

  constructor(code: ErrorCode, message: string, options: LllmErrorOptions & { exitCode?: number } = {}) {
    super(code, message, options);
    this.exitCode = options.exitCode ?? 130;
  }
}

export function isLllmError(value: unknown): value is LllmError {
  return value instanceof LllmError;
}
