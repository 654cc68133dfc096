import { performance } from "node:perf_hooks";
import { approveNone, guardToolCall, type ApprovalPolicy } from "../approval/index.js";
import type { ToolBudget } from "../limits/ToolBudget.js";
import type { ToolCallRequest } from "../providers/Model.js";
import { FunctionCall, type FunctionTool, type ToolContext } from "../tools/index.js";
import type { AgentEvent } from "./AgentEvent.js";
import { canonicalJson } from "../util/canonicalJson.js";
import { parseToolArguments } from "./parseToolArguments.js";
import { UnknownToolError } from "./UnknownToolError.js";

/** The text a repeated call gets instead of being run again; the earlier result follows on the next line. */
export const REPEATED_CALL_TEXT = "This call was already made with the same arguments in this response; use the earlier result:";

export interface ToolRoundOptions {
  agent: string;
  requests: ToolCallRequest[];
  offered: Map<string, FunctionTool>;
  /**
   * The calls made so far in this respond(), by name and canonical arguments. A promise, because an identical
   * call in the same round must wait for the first one's result. The round adds its own calls.
   */
  earlier: Map<string, Promise<FunctionCall>>;
  context: ToolContext;
  onEvent?: ((event: AgentEvent) => void) | undefined;
  /** Asked before each call runs; it throws (and the round fails) when a limit of the run is reached. */
  budget?: ToolBudget | undefined;
  /** Decides calls to tools that need approval; default: refuse them. */
  approve?: ApprovalPolicy | undefined;
  /** The respond()'s signal: a question waiting for approval gives up when it aborts. */
  signal?: AbortSignal | undefined;
}

/** What the model reads when a call it asked for was not approved. */
export function refusalText(tool: string): string {
  return `${tool} needs approval, and the call was refused; it did not run. Go on without it, or say what you needed it for.`;
}

/**
 * Throw an UnknownToolError for the first call to a tool that is not offered. Checked before anything of the
 * round is recorded or run, so the dialog never holds calls without their results.
 */
export function assertToolsOffered(options: { agent: string; requests: ToolCallRequest[]; offered: Map<string, FunctionTool>; limitReached: boolean }): void {
  for (const request of options.requests) {
    if (!options.offered.has(request.name)) {
      throw new UnknownToolError({ agent: options.agent, toolName: request.name, offeredTools: [...options.offered.keys()], limitReached: options.limitReached });
    }
  }
}

/**
 * Run one round of tool calls concurrently and return them in the order the model asked for them. Whatever the
 * model got wrong becomes the call's `resultStr` for it to read: bad JSON arguments, a throwing tool (via
 * `FunctionTool.call`), a call already made with the same arguments (not run again), a call to a tool that needs
 * approval that was refused (not run). A limit of the run reached before or during a call rejects the round.
 */
export async function runToolRound(options: ToolRoundOptions): Promise<FunctionCall[]> {
  const { agent, earlier, onEvent } = options;
  const emit = (call: FunctionCall, started: number, repeated: boolean, refused = false): FunctionCall => {
    onEvent?.({ type: "tool_call", agent, call, durationMs: performance.now() - started, repeated, ...(refused ? { refused } : {}) });
    return call;
  };
  /** Ask for approval when the tool needs it, check the budget, run the call, count it. */
  const run = async (tool: FunctionTool, call: FunctionCall, started: number): Promise<FunctionCall> => {
    const guarded = await guardToolCall({
      tool: call.name,
      arguments: call.arguments,
      needsApproval: tool.approval === "required",
      approve: options.approve ?? approveNone,
      agent,
      budget: options.budget,
      signal: options.signal,
      started,
      run: () => tool.call(call, options.context),
      failed: (done) => done.error !== undefined,
    });
    if (guarded.refused) {
      const error = refusalText(call.name);
      return emit(new FunctionCall({ id: call.id, name: call.name, arguments: call.arguments, error, resultStr: `Error: ${error}` }), started, false, true);
    }
    return emit(guarded.result, started, false);
  };

  const pending = options.requests.map(async (request): Promise<FunctionCall> => {
    const started = performance.now();
    const parsed = parseToolArguments(request.arguments);
    if (!parsed.ok) {
      const error = `the arguments of ${request.name} are not valid JSON (${parsed.reason}). Send a JSON object.`;
      return emit(new FunctionCall({ id: request.id, name: request.name, error, resultStr: `Error: ${error}` }), started, false);
    }
    const key = `${request.name}\u0000${canonicalJson(parsed.value)}`;
    const first = earlier.get(key);
    if (first) {
      const previous = await first;
      const resultStr = `${REPEATED_CALL_TEXT}\n${previous.resultStr ?? ""}`;
      return emit(new FunctionCall({ id: request.id, name: request.name, arguments: parsed.value, resultStr }), started, true);
    }
    // Registered before the first await, so an identical call later in this round finds it.
    const tool = options.offered.get(request.name) as FunctionTool; // checked by assertToolsOffered
    const running = run(tool, new FunctionCall({ id: request.id, name: request.name, arguments: parsed.value }), started);
    earlier.set(key, running);
    return running;
  });
  return Promise.all(pending);
}
