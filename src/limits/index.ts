export { RunBudget, type RunBudgetOptions, type LimitSource } from "./RunBudget.js";
export type { ToolBudget } from "./ToolBudget.js";
export { limitsFromConfig, limitsJson, hasLimits, formatLimit, formatDollars, type RunLimits, type LimitsConfig } from "./RunLimits.js";
export { byAgentJson, byToolJson, describeSpend, type SpendReport, type AgentSpend, type ToolSpend } from "./SpendReport.js";
export { ASSUMED_MAX_ANSWER_TOKENS, MIN_ANSWER_TOKENS, maxAnswerTokens, promptCharacters } from "./requestSize.js";
