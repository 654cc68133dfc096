import { runUsageJson, tacticResultJson } from "../tactics/tacticResultJson.js";
import { byAgentJson, byToolJson, limitsJson } from "../limits/index.js";
import type { RecordedRun, RecordedRunSuccess } from "./runRecorded.js";

/**
 * A recorded run's report as `lllm run --json` prints it (after `schema_version`): the tactic's result, its usage
 * with the cached and reasoning tokens, the cost and the run's id.
 */
export function recordedRunJson(run: RecordedRunSuccess): Record<string, unknown> {
  return { ...tacticResultJson(run.result), usage: recordedUsageJson(run), cost: run.cost, ...(run.limits ? { limits: limitsJson(run.limits) } : {}), ...(run.runId !== undefined ? { run_id: run.runId } : {}), ...resumedJson(run) };
}

/** A resumed run's `resumed`: its attempt, and how many model answers and tool outcomes it took from its journal. */
export function resumedJson(run: Pick<RecordedRun, "resumed">): Record<string, unknown> {
  const { resumed } = run;
  return resumed ? { resumed: { attempt: resumed.attempt, replayed_model_calls: resumed.replayedModelCalls, replayed_tool_calls: resumed.replayedToolCalls } } : {};
}

/**
 * A recorded run's `usage` as JSON writes it, failed runs included: the totals, the cached and reasoning tokens, and
 * where the spend went (`by_agent`, `by_tool`: nested tactics' agents as `<tool>/<agent>`).
 */
export function recordedUsageJson(run: Pick<RecordedRun, "usage" | "spend">): Record<string, unknown> {
  return {
    ...runUsageJson(run.usage),
    cached_prompt_tokens: run.usage.cachedPromptTokens,
    reasoning_tokens: run.usage.reasoningTokens,
    ...(run.spend ? { by_agent: byAgentJson(run.spend), by_tool: byToolJson(run.spend) } : {}),
  };
}
