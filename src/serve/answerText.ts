import type { RecordedRunSuccess } from "../run/runRecorded.js";
import { redactSecrets } from "../util/redact.js";
import type { RunHandle } from "./RunHandle.js";

/** A run's answer as the text a client reads: text as it is, a structured answer as JSON; redacted. */
export function answerText(run: RecordedRunSuccess): string {
  const output = run.result.output;
  return redactSecrets(typeof output === "string" ? output : JSON.stringify(output));
}

/**
 * What a stream still owes the client of a run's answer once the run ends: nothing when the answer was streamed
 * whole, the rest when part of it was, the whole answer when none was (a structured answer, a pattern that does
 * not stream, a run started without streaming).
 */
export function unstreamedRest(run: RecordedRunSuccess, served: RunHandle): string {
  const text = answerText(run);
  const streamed = redactSecrets(served.streamedSinceCall);
  if (streamed === "") return text;
  return text.startsWith(streamed) ? text.slice(streamed.length) : "";
}

/** Tokens of a whole run (nested tactics and programs included): at its end, or so far while it waits. */
export interface ServedUsage {
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
  reasoningTokens: number;
}

export function usageOf(served: RunHandle): ServedUsage {
  const ended = served.finished;
  if (ended) return { promptTokens: ended.usage.promptTokens, completionTokens: ended.usage.completionTokens, cachedPromptTokens: ended.usage.cachedPromptTokens, reasoningTokens: ended.usage.reasoningTokens };
  return { promptTokens: served.usage.promptTokens, completionTokens: served.usage.completionTokens, cachedPromptTokens: 0, reasoningTokens: 0 };
}
