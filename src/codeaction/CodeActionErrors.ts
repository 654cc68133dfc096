import { BudgetError, ModelBehaviorError, type LllmErrorOptions } from "../errors.js";
import type { CodeActionReport } from "./CodeActionReport.js";

/**
 * Every program reached `max_tool_calls`, or the model replied CANNOT_FINISH_WITHIN_CALL_CAP (seed 002). Exit 3.
 * The message names the setting but never its value: the model must not learn it, and neither may a log it reads.
 */
export class CodeActionBudgetError extends BudgetError {
  /** The cap on each program's tool calls (for the caller's code, never in the message). */
  readonly maxToolCalls: number;
  /** Model turns made. */
  readonly attempts: number;
  readonly report: CodeActionReport;

  constructor(message: string, options: LllmErrorOptions & { maxToolCalls: number; attempts: number; report: CodeActionReport }) {
    super("code_action_budget", message, {
      hint: "Raise code_action.max_tool_calls in the tactic, or give the agent a tool that returns many records per call.",
      ...options,
    });
    this.maxToolCalls = options.maxToolCalls;
    this.attempts = options.attempts;
    this.report = options.report;
  }
}

/** The last program ran past `exec_timeout` and was killed with everything it started. Exit 3 (a time budget). */
export class CodeActionTimeoutError extends BudgetError {
  readonly execTimeout: number;
  readonly attempts: number;
  readonly report: CodeActionReport;

  constructor(message: string, options: LllmErrorOptions & { execTimeout: number; attempts: number; report: CodeActionReport }) {
    super("code_action_timeout", message, { hint: "Raise code_action.exec_timeout in the tactic if the job really needs longer.", ...options });
    this.execTimeout = options.execTimeout;
    this.attempts = options.attempts;
    this.report = options.report;
  }
}

/** The last program crashed, or gave no answer, and no repair was left. Exit 1. */
export class CodeActionError extends ModelBehaviorError {
  readonly attempts: number;
  readonly report: CodeActionReport;

  constructor(message: string, options: LllmErrorOptions & { attempts: number; report: CodeActionReport }) {
    super("code_action_failed", message, { hint: "Raise code_action.max_repairs to give the model more tries, or run with --verbose to see each program.", ...options });
    this.attempts = options.attempts;
    this.report = options.report;
  }
}
