import type { LimitsConfig } from "../config/TacticConfig.js";
import type { RunLimitName } from "../errors.js";

export type { LimitsConfig } from "../config/TacticConfig.js";

/**
 * Limits of a whole run: everything it spends, every agent, nested tactic, program and judge included. Each is
 * optional; a run without any is only counted. The tactic's `limits:` and `lllm run --max-…` set them.
 */
export interface RunLimits {
  /** US dollars, summed over every model call at the price table's prices. */
  maxCost?: number;
  /** Tokens (prompt and completion) of every model call. */
  maxTokens?: number;
  /** Tool calls that run: the tool loop's and programs' bridged calls (refused and repeated calls do not run). */
  maxToolCalls?: number;
  /** Seconds of wall-clock time from the start of the run. */
  maxDuration?: number;
}

/** The limits a `limits:` block sets. */
export function limitsFromConfig(config: LimitsConfig | undefined): RunLimits {
  if (!config) return {};
  return {
    ...(config.max_cost !== undefined ? { maxCost: config.max_cost } : {}),
    ...(config.max_tokens !== undefined ? { maxTokens: config.max_tokens } : {}),
    ...(config.max_tool_calls !== undefined ? { maxToolCalls: config.max_tool_calls } : {}),
    ...(config.max_duration !== undefined ? { maxDuration: config.max_duration } : {}),
  };
}

/** The limits as JSON writes them (`lllm run --json`'s `limits`), in the file's spelling. */
export function limitsJson(limits: RunLimits): LimitsConfig {
  return {
    ...(limits.maxCost !== undefined ? { max_cost: limits.maxCost } : {}),
    ...(limits.maxTokens !== undefined ? { max_tokens: limits.maxTokens } : {}),
    ...(limits.maxToolCalls !== undefined ? { max_tool_calls: limits.maxToolCalls } : {}),
    ...(limits.maxDuration !== undefined ? { max_duration: limits.maxDuration } : {}),
  };
}

/** Whether any limit is set. */
export function hasLimits(limits: RunLimits | undefined): boolean {
  return limits !== undefined && (limits.maxCost !== undefined || limits.maxTokens !== undefined || limits.maxToolCalls !== undefined || limits.maxDuration !== undefined);
}

/** A limit's value as a person reads it: `$0.50`, `200,000 tokens`, `40 tool calls`, `300 s`. */
export function formatLimit(name: RunLimitName, value: number): string {
  switch (name) {
    case "max_cost":
      return formatDollars(value);
    case "max_tokens":
      return `${value.toLocaleString("en-US")} tokens`;
    case "max_tool_calls":
      return `${value.toLocaleString("en-US")} tool call${value === 1 ? "" : "s"}`;
    case "max_duration":
      return `${Number(value.toFixed(3))} s`;
  }
}

/** Dollars with the digits a small spend needs: `$0.50`, `$0.03`, `$0.0043`, `$12.31`. */
export function formatDollars(value: number): string {
  if (value === 0) return "$0";
  if (value >= 0.1) return `$${value.toFixed(2)}`;
  return `$${Number(value.toPrecision(2))}`;
}
