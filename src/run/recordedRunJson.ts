import { runUsageJson, tacticResultJson } from "../tactics/tacticResultJson.js";
import type { RecordedRunSuccess } from "./runRecorded.js";

/**
 * A recorded run's report as `lllm run --json` prints it (after `schema_version`): the tactic's result, its usage
 * with the cached and reasoning tokens, the cost and the run's id.
 */
export function recordedRunJson(run: RecordedRunSuccess): Record<string, unknown> {
  const usage = { ...runUsageJson(run.usage), cached_prompt_tokens: run.usage.cachedPromptTokens, reasoning_tokens: run.usage.reasoningTokens };
  return { ...tacticResultJson(run.result), usage, cost: run.cost, ...(run.runId !== undefined ? { run_id: run.runId } : {}) };
}
