import { ModelBehaviorError, type LllmErrorOptions } from "../errors.js";
import type { CodeActionReport } from "./CodeActionReport.js";
import type { ErrorCode } from "../errors.js";

/**
 * A code-action run ended without an answer (seed 002's GraphExecutionError): the base of every code-action
 * failure, so that one handler catches them all; each carries the report. Used as is when the last program
 * crashed, or gave no answer, and no repair was left. Exit 1.
 */
export class CodeActionError extends ModelBehaviorError {
  /** Model turns made. */
  readonly attempts: number;
  readonly report: CodeActionReport;

  constructor(message: string, options: LllmErrorOptions & { attempts: number; report: CodeActionReport; code?: ErrorCode }) {
    super(options.code ?? "code_action_failed", message, { hint: "Raise code_action.max_repairs to give the model more tries, or run with --verbose to see each program.", ...options });
    this.attempts = options.attempts;
    this.report = options.report;
  }
}

/**
 * Every program reached `max_tool_calls`, or the model replied CANNOT_FINISH_WITHIN_CALL_CAP (seed 002). Exit 3,
 * like every budget (`instanceof BudgetError` holds too). The message names the setting but never its value: the
 * model must not learn it, and neither may a log it reads.
 */
export class CodeActionBudgetError extends CodeActionError {
  override readonly exitCode = 3;
  /** The cap on each program's tool calls (for the caller's code, never in the message). */
  readonly maxToolCalls: number;

  constructor(message: string, options: LllmErrorOptions & { maxToolCalls: number; attempts: number; report: CodeActionReport }) {
    super(message, {
      code: "code_action_budget",
      hint: "Raise code_action.max_tool_calls in the tactic, or give the agent a tool that returns many records per call.",
      ...options,
    });
    this.maxToolCalls = options.maxToolCalls;
  }
}

/** The last program ran past `exec_timeout` and was killed with everything it started. Exit 3 (a time budget). */
export class CodeActionTimeoutError extends CodeActionError {
  override readonly exitCode = 3;
  readonly execTimeout: number;

  constructor(message: string, options: LllmErrorOptions & { execTimeout: number; attempts: number; report: CodeActionReport }) {
    super(message, { code: "code_action_timeout", hint: "Raise code_action.exec_timeout in the tactic if the job really needs longer.", ...options });
    this.execTimeout = options.execTimeout;
  }
}
