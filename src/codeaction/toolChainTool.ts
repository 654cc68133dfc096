import { performance } from "node:perf_hooks";
import type { IsolationOptions } from "../sandbox/index.js";
import { tool, type FunctionTool } from "../tools/index.js";
import { approveNone, type ApprovalPolicy } from "../approval/index.js";
import type { ToolBudget } from "../limits/ToolBudget.js";
import type { ArtifactStore } from "./ArtifactStore.js";
import type { ProgramRecord } from "./CodeActionReport.js";
import { functionList, PROGRAM_RULES } from "./programPrompt.js";
import { runProgram } from "./runProgram.js";

/** The agent's `tool_chain:` settings with defaults filled in. */
export interface ToolChainSettings {
  /** The longest a script may run, in seconds; a larger `timeout` argument is cut to it. Default 60. */
  timeout: number;
  /** Calls each script may make. Default 50. */
  maxToolCalls: number;
}

export const DEFAULT_TOOL_CHAIN: ToolChainSettings = { timeout: 60, maxToolCalls: 50 };

export interface ToolChainToolOptions {
  /** The tools a script may call: the agent's other tools. */
  tools: readonly FunctionTool[];
  settings: ToolChainSettings;
  /** Already decided (see `requireIsolation`). */
  isolation: Partial<IsolationOptions>;
  maxOutputChars: number;
  artifacts: ArtifactStore;
  approval?: ApprovalPolicy | undefined;
  /** Each script once it ran, for the run's report. */
  onScript?: ((record: ProgramRecord) => void) | undefined;
  /** Warnings for the person running it (stderr): a script reached max_tool_calls. */
  onWarning?: ((message: string) => void) | undefined;
  /** The run's budget: each call a script makes that runs counts in it. */
  budget?: ToolBudget | undefined;
  /** The agent the tool belongs to (the budget's attribution, the approval question). */
  agent?: string | undefined;
}

/**
 * `tool_chain(code, timeout)` (seed 001): a tool for an agent in the ordinary loop that runs a Python script over
 * the agent's other tools in a fresh sandbox, and returns what the script passed to final_answer() or printed.
 * The model batches calls when it sees fit: loops, joins and sums run in code, with no model round trip between
 * calls. Each script has the code-action budget, approval and pass-by-reference rules.
 */
export function toolChainTool(options: ToolChainToolOptions): FunctionTool {
  const { settings } = options;
  const made = tool({
    name: "tool_chain",
    description: `Run a Python script that calls the other tools as Python functions, and return what it passes to final_answer(value) or prints. Use it to make many tool calls in one step: loops, joins and computations run in the script, with no round trip through you between calls. The script runs in a fresh sandbox without network access. Functions available in the script (also as tools.<name>(...)):

${functionList(options.tools)}

Rules:
${PROGRAM_RULES}`,
    // `timeout` is optional without a schema default: a default would add "(default: 60)" after "at most 60".
    parameters: {
      type: "object",
      properties: {
        code: { type: "string", description: "The whole Python script" },
        timeout: { type: "number", description: `Seconds the script may run (at most ${settings.timeout}, the default)` },
      },
      required: ["code"],
    },
    run: async ({ code, timeout }, context) => {
      const started = performance.now();
      const seconds = Math.min(Math.max(Number(timeout) || settings.timeout, 1), settings.timeout);
      const outcome = await runProgram(String(code), {
        tools: options.tools,
        maxToolCalls: settings.maxToolCalls,
        execTimeout: seconds,
        isolation: options.isolation,
        maxOutputChars: options.maxOutputChars,
        approval: options.approval ?? approveNone,
        artifacts: options.artifacts,
        context,
        signal: context.signal,
        label: "tool_chain: the script",
        onWarning: options.onWarning,
        budget: options.budget,
        agent: options.agent,
      });
      options.onScript?.({ attempt: 1, status: outcome.status, toolCalls: outcome.bridge.toolCalls, calls: outcome.bridge.calls, error: outcome.error ?? null, durationMs: Math.round(performance.now() - started), code: String(code) });
      switch (outcome.status) {
        case "ok":
          return outcome.answer;
        case "no_answer":
          return "(the script printed nothing and did not call final_answer)";
        case "budget":
          throw new Error("the script reached its cap on function calls, so its output was discarded: it was incomplete. Do the whole job with fewer calls (use a function that returns many records at once), never on part of the data.");
        case "timeout":
          // Seed 000 Step 13: a timeout is a TimeoutError, reported to the model as an error; the word stays.
          throw new Error(`TimeoutError: the script did not finish within ${seconds} s and was stopped`);
        default:
          throw new Error(outcome.error ?? outcome.output);
      }
    },
  });
  // A resumed run runs a script again: its bridged calls are answered from the run's journal.
  made.replaysInside = true;
  return made;
}
