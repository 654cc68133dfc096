import { performance } from "node:perf_hooks";
import type { ToolBudget } from "../limits/ToolBudget.js";
import type { ApprovalPolicy } from "./ApprovalPolicy.js";

/** How a guarded call ended: refused by the approval policy (it did not run, nothing was counted), or run. */
export type GuardedCall<T> = { refused: true } | { refused: false; result: T };

/**
 * One call to a tool, in the order the tool loop and code-action programs both keep: when the tool needs approval,
 * ask `approve` first (a refusal ends here: nothing runs, nothing counts); then ask the run's budget (it throws
 * when a limit of the run is reached, and the call does not run); run it; count it, with its time since `started`
 * (a wait for approval included) and whether it failed.
 */
export async function guardToolCall<T>(options: {
  tool: string;
  arguments: Record<string, unknown>;
  needsApproval: boolean;
  approve: ApprovalPolicy;
  /** Who asks, for the approval question; the budget counts the call as this agent's (`program` when none). */
  agent?: string | undefined;
  budget?: ToolBudget | undefined;
  /** A question waiting for approval gives up when it aborts. */
  signal?: AbortSignal | undefined;
  /** When the call began (`performance.now()`). */
  started: number;
  run: () => Promise<T>;
  failed: (result: T) => boolean;
}): Promise<GuardedCall<T>> {
  const { tool, agent, budget, signal } = options;
  if (options.needsApproval && !(await options.approve({ tool, arguments: options.arguments, ...(agent !== undefined ? { agent } : {}), ...(signal ? { signal } : {}) }))) return { refused: true };
  const counted = { agent: agent ?? "program", tool };
  budget?.beforeToolCall(counted);
  const result = await options.run();
  budget?.afterToolCall({ ...counted, durationMs: performance.now() - options.started, failed: options.failed(result) });
  return { refused: false, result };
}
