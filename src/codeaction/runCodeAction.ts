import { performance } from "node:perf_hooks";
import type { Agent, AgentEvent } from "../agent/index.js";
import type { IsolationOptions } from "../sandbox/index.js";
import type { FunctionTool, ToolContext } from "../tools/index.js";
import { approveNone, type ApprovalPolicy } from "../approval/index.js";
import type { ArtifactStore } from "./ArtifactStore.js";
import { CodeActionBudgetError, CodeActionError, CodeActionTimeoutError } from "./CodeActionErrors.js";
import type { CodeActionReport, ProgramRecord } from "./CodeActionReport.js";
import { extractProgram } from "./extractProgram.js";
import { BUDGET_REPAIR_PROMPT, CANNOT_FINISH, crashRepairPrompt, EMPTY_REPAIR_PROMPT, timeoutRepairPrompt } from "./repairPrompts.js";
import { runProgram, type ProgramOutcome } from "./runProgram.js";
import { SideEffectLedger } from "./SideEffectLedger.js";
import { plural } from "../util/plural.js";

/** The `code_action:` block with defaults filled in (seed 002). */
export interface CodeActionSettings {
  /** Seconds each program may run. Default 120. */
  execTimeout: number;
  /** Programs written after a failed one. Default 1. */
  maxRepairs: number;
  /** Tool calls each program may make. Default 50. */
  maxToolCalls: number;
}

export const DEFAULT_CODE_ACTION: CodeActionSettings = { execTimeout: 120, maxRepairs: 1, maxToolCalls: 50 };

export interface RunCodeActionOptions {
  /** Writes the programs; offers no tools (see `codeActionAgent`). */
  agent: Agent;
  /** The functions programs may call. */
  tools: readonly FunctionTool[];
  /** The user's turn. */
  task: string;
  /** Fills the system prompt's placeholders (the tactic's vars). */
  promptArgs?: Record<string, unknown> | undefined;
  settings: CodeActionSettings;
  isolation: Partial<IsolationOptions>;
  maxOutputChars: number;
  artifacts: ArtifactStore;
  /** Default: refuse every call to a tool that needs approval. */
  approval?: ApprovalPolicy | undefined;
  referenceThreshold?: number | undefined;
  context?: ToolContext | undefined;
  signal?: AbortSignal | undefined;
  /** Warnings; default the agent's own `onEvent`. */
  onEvent?: ((event: AgentEvent) => void) | undefined;
  python?: string | undefined;
}

/** The answer and what it took. */
export interface CodeActionResult {
  output: unknown;
  report: CodeActionReport;
}

/**
 * The code-action pattern (seed 002): in one turn the model writes one program over the tools; it runs in a
 * fresh sandbox; its answer is the run's output, and no model call follows. A program that fails goes back to
 * the model (its traceback's tail, or the budget's repair prompt) up to `maxRepairs` times; side-effect calls
 * of failed programs are not run again. Throws CodeActionBudgetError, CodeActionTimeoutError or
 * CodeActionError when no program succeeds, each carrying the report.
 */
export async function runCodeAction(options: RunCodeActionOptions): Promise<CodeActionResult> {
  const started = performance.now();
  const { agent, settings } = options;
  const report: CodeActionReport = { toolCalls: 0, attempts: 0, programs: [], error: null, durationMs: 0 };
  const finish = (): CodeActionReport => Object.assign(report, { durationMs: Math.round(performance.now() - started) });
  const ledger = new SideEffectLedger();
  let budgetHit = false;
  agent.open("main", { promptArgs: options.promptArgs ?? {} });
  agent.receive(options.task);

  for (let attempt = 1; ; attempt += 1) {
    const reply = (await agent.respond({ ...(options.signal ? { signal: options.signal } : {}) })).content;
    report.attempts += 1;
    const code = extractProgram(reply);
    if (code?.trim() === CANNOT_FINISH || (reply.includes(CANNOT_FINISH) && !reply.includes("```"))) {
      report.error = `the job needs more tool calls than max_tool_calls allows: the model replied ${CANNOT_FINISH}`;
      throw new CodeActionBudgetError(`code-action: the job needs more tool calls than max_tool_calls allows: after ${plural(report.programs.length, "program")}, the model replied ${CANNOT_FINISH}`, {
        maxToolCalls: settings.maxToolCalls,
        attempts: report.attempts,
        report: finish(),
      });
    }
    const outcome = code === undefined ? undefined : await run(code, options, ledger, attempt);
    const record = programRecord(attempt, code ?? "", outcome);
    report.programs.push(record);
    report.toolCalls += record.toolCalls;
    if (outcome?.status === "ok") {
      report.error = null;
      if (budgetHit) (options.onEvent ?? agent.onEvent)?.({ type: "warning", agent: agent.name, message: "code-action: the answer comes from a program written after an earlier one reached max_tool_calls" });
      return { output: outcome.answer, report: finish() };
    }
    report.error = record.error;
    budgetHit ||= outcome?.status === "budget";
    if (attempt > settings.maxRepairs) throw failure(outcome, options, report, finish);
    // Said before the model is asked again: a program killed at exec_timeout has kept the user waiting already.
    (options.onEvent ?? agent.onEvent)?.({ type: "program_repair", agent: agent.name, attempt, repair: attempt, maxRepairs: settings.maxRepairs, reason: repairReason(outcome) });
    agent.receive(repairPrompt(outcome, settings));
  }
}

function run(code: string, options: RunCodeActionOptions, ledger: SideEffectLedger, attempt: number): Promise<ProgramOutcome> {
  ledger.startProgram();
  const warn = options.onEvent ?? options.agent.onEvent;
  return runProgram(code, {
    tools: options.tools,
    maxToolCalls: options.settings.maxToolCalls,
    execTimeout: options.settings.execTimeout,
    isolation: options.isolation,
    maxOutputChars: options.maxOutputChars,
    approval: options.approval ?? approveNone,
    artifacts: options.artifacts,
    ledger,
    referenceThreshold: options.referenceThreshold,
    context: options.context ?? {},
    signal: options.signal,
    python: options.python,
    label: `code-action: program ${attempt}`,
    budget: options.agent.budget,
    agent: options.agent.name,
    onWarning: (message) => warn?.({ type: "warning", agent: options.agent.name, message }),
  });
}

function programRecord(attempt: number, code: string, outcome: ProgramOutcome | undefined): ProgramRecord {
  if (!outcome) return { attempt, status: "error", toolCalls: 0, calls: [], error: "the reply contained no program", durationMs: 0, code };
  return { attempt, status: outcome.status, toolCalls: outcome.bridge.toolCalls, calls: outcome.bridge.calls, error: outcome.error ?? null, durationMs: Math.round(outcome.durationMs), code };
}

/** Why a program goes back to the model, on one line: the last line of a traceback, else the outcome's own reason. */
function repairReason(outcome: ProgramOutcome | undefined): string {
  if (!outcome) return "the reply contained no program";
  const lines = (outcome.error ?? "").split("\n").map((line) => line.trim()).filter((line) => line !== "");
  if (outcome.status === "error") return `the program failed: ${lines.at(-1) ?? "unknown error"}`;
  return lines.join(" ") || `the program ended with status ${outcome.status}`;
}

function repairPrompt(outcome: ProgramOutcome | undefined, settings: CodeActionSettings): string {
  if (!outcome) return crashRepairPrompt("Your reply contained no program.");
  switch (outcome.status) {
    case "budget":
      return BUDGET_REPAIR_PROMPT;
    case "timeout":
      return timeoutRepairPrompt(settings.execTimeout);
    case "no_answer":
      return EMPTY_REPAIR_PROMPT;
    default:
      return crashRepairPrompt(outcome.error ?? outcome.output);
  }
}

function failure(outcome: ProgramOutcome | undefined, options: RunCodeActionOptions, report: CodeActionReport, finish: () => CodeActionReport): Error {
  const { settings } = options;
  const attempts = report.attempts;
  const tries = plural(report.programs.length, "program");
  if (outcome?.status === "budget") {
    const hits = report.programs.filter((program) => program.status === "budget").length;
    const which = hits === report.programs.length ? (hits === 1 ? "the program" : "every program") : "the last program";
    return new CodeActionBudgetError(`code-action: ${which} reached max_tool_calls (the cap on each program's tool calls); ${tries} tried, none finished`, { maxToolCalls: settings.maxToolCalls, attempts, report: finish() });
  }
  if (outcome?.status === "timeout") {
    return new CodeActionTimeoutError(`code-action: the program did not finish within exec_timeout (${settings.execTimeout} s) and was killed; ${tries} tried`, { execTimeout: settings.execTimeout, attempts, report: finish() });
  }
  // The error text is the program's (the model wrote it, and what it raises): indented, so that no line of it can
  // pass for one of lllm's own (`lllm: error: …`) on stderr.
  const error = (report.error ?? "unknown error").replace(/\n/g, "\n  ");
  return new CodeActionError(`code-action: the program failed and no repair is left (${tries} tried, max_repairs: ${settings.maxRepairs}):\n  ${error}`, { attempts, report: finish() });
}
