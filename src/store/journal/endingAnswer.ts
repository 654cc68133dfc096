import type { ModelCallRecord, RunRecord } from "../RunRecord.js";

/**
 * The errors a model's own answer ends a run with (exit 1): a call of a tool not offered, a refusal or content
 * filter, an answer that still did not parse. Replayed, that answer would end the resumed run the same way.
 */
const ENDED_BY_ANSWER = new Set(["unknown_tool", "answer_filtered", "parse_failed"]);

/** Whether a run that ended with this error code is resumed by asking the model again for its last answer. */
export function endedByAnswer(code: string): boolean {
  return ENDED_BY_ANSWER.has(code);
}

/**
 * The errors of what the model did that a resume replays from the record into the same end: programs that failed
 * every repair (`code_action_failed`) or all reached `code_action.max_tool_calls` (`code_action_budget`: the cap is the
 * tactic's), a reply a parser refused (`parse_error`). An answer that ended the run by itself is asked for again
 * instead (`endedByAnswer`), and a program killed at `exec_timeout` runs again and may finish in time: both are worth
 * a resume.
 */
const REPLAYED_TO_SAME_END = new Set(["code_action_failed", "code_action_budget", "parse_error"]);

/**
 * Whether a resume of a run that ended with this error code would only replay its way to the same error: the errors
 * above, and a recorded or scripted model that no longer fits the run (`provider_replay_*`, `provider_script_*`),
 * which a resume would diverge from again. The one rule for `lllm run`'s "resume it with" advice and for what `lllm
 * logs` marks resumable (`isResumable`).
 */
export function replaysToSameEnd(code: string | null): boolean {
  return code !== null && (REPLAYED_TO_SAME_END.has(code) || /^provider_(replay|script)_/.test(code));
}

/**
 * The recorded model call whose answer ended the run, if that is how it ended: a resume asks the model again for it
 * (with the tactic as it is now, under `--force`) instead of replaying it, so that `lllm run --resume` of such a run
 * can go on at all. Its spend stays counted with the earlier attempt's.
 */
export function endingAnswer(run: Pick<RunRecord, "status" | "error_code" | "error_message" | "model_calls">): ModelCallRecord | undefined {
  if (run.status !== "error" || run.error_code === null || !ENDED_BY_ANSWER.has(run.error_code)) return undefined;
  // Each of these errors names its agent first (`agent \`bot\` …`): with agents running side by side, the last call
  // of the run may be another's.
  const agent = /^agent `([^`]+)`/.exec(run.error_message ?? "")?.[1];
  const calls = [...run.model_calls].filter((call) => agent === undefined || call.agent === agent || call.agent.endsWith(`/${agent}`)).sort((a, b) => a.seq - b.seq);
  const ending =
    run.error_code === "unknown_tool" ? (call: ModelCallRecord) => call.tool_calls.some((toolCall) => !call.tools.includes(toolCall.name))
    : run.error_code === "answer_filtered" ? (call: ModelCallRecord) => call.finish_reason === "content_filter"
    : () => true;
  return calls.findLast(ending);
}
