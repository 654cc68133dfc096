import { byAgentJson, byToolJson, hasLimits, limitsJson, type RunLimits, type SpendReport } from "../limits/index.js";

/** Where a run's spend went, as JSON writes it (`usage.by_agent` and `usage.by_tool` of `run --json`, the run store's record). */
export function spendJson(spend: SpendReport, limits?: RunLimits): Record<string, unknown> {
  return { by_agent: byAgentJson(spend), by_tool: byToolJson(spend), ...(limits && hasLimits(limits) ? { limits: limitsJson(limits) } : {}) };
}
