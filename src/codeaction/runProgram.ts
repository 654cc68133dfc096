import { performance } from "node:perf_hooks";
import { InterruptedError, LllmError } from "../errors.js";
import { PythonKernel, type CellResult, type IsolationOptions } from "../sandbox/index.js";
import type { FunctionTool, ToolContext } from "../tools/index.js";
import type { ApprovalPolicy } from "../approval/index.js";
import type { ToolBudget } from "../limits/ToolBudget.js";
import type { ArtifactStore } from "./ArtifactStore.js";
import type { ProgramStatus } from "./CodeActionReport.js";
import { ProgramBridge } from "./ProgramBridge.js";
import type { SideEffectLedger } from "./SideEffectLedger.js";
import { toolPrelude } from "./toolPrelude.js";

/** How one program runs: its tools, its limits, and who approves calls. */
export interface RunProgramOptions {
  tools: readonly FunctionTool[];
  maxToolCalls: number;
  /** Seconds; then the program is stopped and its kernel killed with every process it started. */
  execTimeout: number;
  /** Already decided (see `requireIsolation`): never `auto` here, so that nothing falls back silently. */
  isolation: Partial<IsolationOptions>;
  /** The printed output kept (the answer when there is no final_answer); 0 for no limit. */
  maxOutputChars: number;
  approval: ApprovalPolicy;
  artifacts: ArtifactStore;
  ledger?: SideEffectLedger | undefined;
  referenceThreshold?: number | undefined;
  context: ToolContext;
  signal?: AbortSignal | undefined;
  python?: string | undefined;
  onStderr?: ((text: string) => void) | undefined;
  /** Warnings for the person running it (stderr), never for the model: e.g. the program reached max_tool_calls. */
  onWarning?: ((message: string) => void) | undefined;
  /** What the warnings call the program: `code-action: program 2`, `tool_chain: the script`. */
  label?: string | undefined;
  /** The run's budget: each bridged call that runs counts in it. */
  budget?: ToolBudget | undefined;
  /** The agent that wrote the program (the budget's attribution, the approval question). */
  agent?: string | undefined;
}

/** What running one program gave. */
export interface ProgramOutcome {
  status: ProgramStatus;
  /** The answer, when `status` is `ok`: final_answer's value, or the printed output. */
  answer?: unknown;
  /** What it printed, then its traceback. */
  output: string;
  /** Why it failed: the tail of the traceback, or what happened. */
  error?: string;
  bridge: ProgramBridge;
  durationMs: number;
}

/** The end of a traceback says what went wrong; the model gets this much of it. */
const ERROR_TAIL_CHARS = 3000;

/**
 * Run one program in a fresh kernel (seed 002: no state survives between programs), then kill the kernel and
 * everything it started. The program's answer is what it passed to final_answer(), else what it printed; a
 * program that reached the call cap fails even if it caught ToolBudgetExceeded, because its result is incomplete.
 */
export async function runProgram(code: string, options: RunProgramOptions): Promise<ProgramOutcome> {
  const started = performance.now();
  const bridge = new ProgramBridge({
    tools: options.tools,
    maxToolCalls: options.maxToolCalls,
    approval: options.approval,
    artifacts: options.artifacts,
    ledger: options.ledger,
    referenceThreshold: options.referenceThreshold,
    context: { ...options.context, ...(options.signal ? { signal: options.signal } : {}) },
    // Seed 002: reaching the cap logs a warning when it happens, not only when the run ends.
    budget: options.budget,
    agent: options.agent,
    onBudgetReached: () => options.onWarning?.(`${options.label ?? "code-action: the program"} reached max_tool_calls (the cap on each program's tool calls); its later calls are refused and its output will be discarded`),
  });
  throwIfAborted(options.signal);
  const kernel = await PythonKernel.start({
    hostFunctions: bridge.hostFunctions(),
    prelude: toolPrelude(options.tools),
    maxOutputChars: options.maxOutputChars,
    timeout: options.execTimeout,
    isolation: options.isolation,
    ...(options.python ? { python: options.python } : {}),
    ...(options.onStderr ? { onStderr: options.onStderr } : {}),
  });
  const abort = (): void => void kernel.close();
  options.signal?.addEventListener("abort", abort, { once: true });
  let result: CellResult;
  try {
    result = await kernel.execute(code, { timeout: options.execTimeout });
  } catch (error) {
    throwIfAborted(options.signal);
    throw error;
  } finally {
    options.signal?.removeEventListener("abort", abort);
    await kernel.close();
  }
  throwIfAborted(options.signal);
  return { ...classify(result, bridge, options.execTimeout), output: result.output, bridge, durationMs: performance.now() - started };
}

function classify(result: CellResult, bridge: ProgramBridge, execTimeout: number): { status: ProgramStatus; answer?: unknown; error?: string } {
  if (bridge.budgetExceeded) return { status: "budget", error: "the program reached max_tool_calls (the cap on each program's tool calls); its output was discarded" };
  if (result.error?.type === "TimeoutError") return { status: "timeout", error: `the program did not finish within exec_timeout (${execTimeout} s) and was killed` };
  if (result.error) return { status: "error", error: tail(result.output) || `${result.error.type}: ${result.error.message}` };
  if (bridge.finalAnswer) return { status: "ok", answer: bridge.finalAnswer.value };
  const printed = result.output.replace(/\s+$/, "");
  if (printed === "") return { status: "no_answer", error: "the program printed nothing and did not call final_answer()" };
  return { status: "ok", answer: printed };
}

function tail(output: string): string {
  const trimmed = output.replace(/\s+$/, "");
  return trimmed.length > ERROR_TAIL_CHARS ? `...${trimmed.slice(-ERROR_TAIL_CHARS)}` : trimmed;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  const reason: unknown = signal.reason;
  if (reason instanceof LllmError) throw reason;
  throw new InterruptedError("interrupted", "the code-action run was interrupted", { cause: reason });
}
