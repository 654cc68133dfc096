import { codeActionReportJson, programRecordJson } from "../codeaction/CodeActionReport.js";
import type { RunUsage, TacticResult, ToolCallRecord } from "./TacticRun.js";

/** A run's usage as JSON writes it (`lllm run --json`, batch lines): snake_case, in this key order. */
export function runUsageJson(usage: RunUsage): Record<string, number> {
  return { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens, llm_calls: usage.llmCalls };
}

/** One tool call as JSON writes it (`tool_calls` of `lllm run --json`). */
export function toolCallJson(call: ToolCallRecord): Record<string, unknown> {
  return { agent: call.agent, name: call.name, arguments: call.arguments, result: call.result, error: call.error, duration_ms: call.durationMs };
}

/** What programs did and stored, as JSON writes it: the parts of a run's report beyond the answer (also kept in the run store). */
export function programDetailsJson(result: Pick<TacticResult, "codeAction" | "toolChains" | "artifacts">): Record<string, unknown> {
  return {
    ...(result.codeAction ? { code_action: codeActionReportJson(result.codeAction) } : {}),
    ...(result.toolChains ? { tool_chains: result.toolChains.map(programRecordJson) } : {}),
    ...(result.artifacts ? { artifacts: result.artifacts } : {}),
  };
}

/** A run's result as `lllm run --json` prints it (the dry run's request is printed on its own). */
export function tacticResultJson(result: TacticResult): Record<string, unknown> {
  return {
    output: result.output,
    usage: runUsageJson(result.usage),
    tool_calls: result.toolCalls.map(toolCallJson),
    model_calls: result.modelCalls.map((call) => ({ agent: call.agent, model: call.model, prompt_tokens: call.promptTokens, completion_tokens: call.completionTokens })),
    duration_ms: result.durationMs,
    ...programDetailsJson(result),
  };
}
