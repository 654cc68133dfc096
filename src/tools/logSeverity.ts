import { ToolError } from "../errors.js";
import { LOG_LEVELS } from "./ToolContext.js";

/**
 * The rank of a `ctx.log` level in `LOG_LEVELS` (0 = debug). An unknown level fails the call the same way whether
 * the tool runs locally or for an MCP client (a tool written against one must not break on the other).
 */
export function logSeverity(level: unknown): number {
  const severity = LOG_LEVELS.indexOf(level as (typeof LOG_LEVELS)[number]);
  if (severity < 0) throw new ToolError("tool_failed", `ctx.log: unknown level ${JSON.stringify(level)}; the levels are ${LOG_LEVELS.join(", ")}`);
  return severity;
}
