import { performance } from "node:perf_hooks";
import type { Model, ModelMessage } from "../providers/Model.js";
import { DEFAULT_SAMPLE_MAX_TOKENS, type SampleRequest, type SampleResult } from "../tools/index.js";
import { plainSampleRequest, sampleOrigin } from "../tools/sampleRequest.js";
import type { AgentEvent } from "./AgentEvent.js";

/**
 * `ctx.sample` inside an agent: one call of the agent's own model with the request's messages, reported as a
 * model call of the agent (so the run counts its tokens and cost). Non-text blocks go as their bracketed note: a
 * local model call takes text. The request names no agent (a scripted model or cassette answers it by its text), but
 * one a resumed run's record may answer (`markSample`): that names the agent, whose recorded calls answer it.
 */
export async function sampleWithModel(request: SampleRequest, options: { model: Model; agent: string; round: number; modelArgs?: Record<string, unknown> | undefined; signal?: AbortSignal | undefined; onEvent?: ((event: AgentEvent) => void) | undefined }): Promise<SampleResult> {
  const plain = plainSampleRequest(request);
  const messages: ModelMessage[] = [];
  if (plain.systemPrompt) messages.push({ role: "system", content: plain.systemPrompt });
  for (const message of plain.messages) messages.push({ role: message.role, content: message.content });
  const modelArgs: Record<string, unknown> = { ...(options.modelArgs ?? {}), max_tokens: request.maxTokens ?? DEFAULT_SAMPLE_MAX_TOKENS };
  if (request.temperature !== undefined) modelArgs["temperature"] = request.temperature;
  if (request.stopSequences !== undefined) modelArgs["stop"] = request.stopSequences;
  const { model, agent, round, onEvent } = options;
  const fromRecord = sampleOrigin(request);
  onEvent?.({ type: "model_call", agent, round, messages: messages.length, tools: [], model: model.name, sent: messages });
  const started = performance.now();
  const response = await model.generate({ messages, modelArgs, ...(fromRecord !== undefined ? { agent, fromRecord } : {}), ...(options.signal ? { signal: options.signal } : {}) });
  const text = response.message.content ?? "";
  onEvent?.({ type: "model_reply", agent, round, text, toolCalls: [], usage: response.usage, model: model.name, latencyMs: performance.now() - started, ...(response.finishReason !== undefined ? { finishReason: response.finishReason } : {}), sent: messages });
  return { text, content: [{ type: "text", text }], model: model.name, stopReason: response.finishReason === "length" ? "maxTokens" : response.finishReason === "stop" || response.finishReason === undefined ? "endTurn" : response.finishReason };
}
