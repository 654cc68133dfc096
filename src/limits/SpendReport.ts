import type { Usage } from "../providers/Model.js";
import { formatDollars } from "./RunLimits.js";
import { addCost } from "../util/roundCost.js";
import { plural } from "../util/plural.js";

/** What one agent of a run spent. Agents of nested tactics are named `<tool>/<agent>`. */
export interface AgentSpend {
  modelCalls: number;
  promptTokens: number;
  completionTokens: number;
  /** US dollars; `null` when one of its models has no known price. */
  cost: number | null;
  /** Tool calls it made that ran (a program's bridged calls count for the agent that wrote the program). */
  toolCalls: number;
}

/** What the calls of one tool spent: the calls themselves, and the model calls made inside them (nested tactics, agents used as tools). */
export interface ToolSpend {
  calls: number;
  /** Calls that failed (the model read an error). */
  failed: number;
  durationMs: number;
  modelCalls: number;
  promptTokens: number;
  completionTokens: number;
  /** US dollars of the model calls made inside this tool's calls; `null` when a price is unknown. */
  cost: number | null;
}

/** What a run spent, in all and where. */
export interface SpendReport {
  modelCalls: number;
  toolCalls: number;
  promptTokens: number;
  completionTokens: number;
  /** US dollars; `null` when a model's price is unknown. */
  cost: number | null;
  byAgent: Record<string, AgentSpend>;
  byTool: Record<string, ToolSpend>;
}

/** A cost that stays unknown once one part is. */

/** Count one model call in a spend: an agent's, a tool's, the run's. */
export function countModelCall(spend: { modelCalls: number; promptTokens: number; completionTokens: number; cost: number | null }, usage: Usage, cost: number | null): void {
  spend.modelCalls += 1;
  spend.promptTokens += usage.promptTokens;
  spend.completionTokens += usage.completionTokens;
  spend.cost = addCost(spend.cost, cost);
}

/** `usage.by_agent` of `lllm run --json`: snake_case, like every JSON lllm writes. */
export function byAgentJson(report: SpendReport): Record<string, Record<string, number | null>> {
  return Object.fromEntries(
    Object.entries(report.byAgent).map(([name, spend]) => [name, { model_calls: spend.modelCalls, prompt_tokens: spend.promptTokens, completion_tokens: spend.completionTokens, cost: spend.cost, tool_calls: spend.toolCalls }]),
  );
}

/** `usage.by_tool` of `lllm run --json`. */
export function byToolJson(report: SpendReport): Record<string, Record<string, number | null>> {
  return Object.fromEntries(
    Object.entries(report.byTool).map(([name, spend]) => [
      name,
      { calls: spend.calls, failed: spend.failed, duration_ms: Math.round(spend.durationMs), model_calls: spend.modelCalls, prompt_tokens: spend.promptTokens, completion_tokens: spend.completionTokens, cost: spend.cost },
    ]),
  );
}

/** Dollars to a millionth of a cent: enough for any sum a person checks, without float noise. */

/**
 * Where a run's spend went, in a line or two for an error message: the agents by cost (or tokens), then the tools
 * by calls, the largest first, at most five of each.
 */
export function describeSpend(report: SpendReport): string {
  const agents = Object.entries(report.byAgent)
    .sort(([, a], [, b]) => (b.cost ?? 0) - (a.cost ?? 0) || b.promptTokens + b.completionTokens - (a.promptTokens + a.completionTokens))
    .slice(0, 5)
    .map(([name, spend]) => `${name} ${spend.cost === null ? `${spend.promptTokens + spend.completionTokens} tokens` : formatDollars(spend.cost)} (${plural(spend.modelCalls, "model call")}${spend.toolCalls > 0 ? `, ${plural(spend.toolCalls, "tool call")}` : ""})`);
  const tools = Object.entries(report.byTool)
    .sort(([, a], [, b]) => (b.cost ?? 0) - (a.cost ?? 0) || b.calls - a.calls)
    .slice(0, 5)
    .map(([name, spend]) => `${name} ${plural(spend.calls, "call")}${spend.modelCalls > 0 ? ` spending ${spend.cost === null ? `${spend.promptTokens + spend.completionTokens} tokens` : formatDollars(spend.cost)} inside` : ""}`);
  const parts = [`by agent: ${agents.join(", ") || "none"}`];
  if (tools.length > 0) parts.push(`by tool: ${tools.join(", ")}`);
  return parts.join("; ");
}
