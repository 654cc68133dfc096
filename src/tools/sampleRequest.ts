import { blockText, type ContentBlock } from "./ContentBlock.js";
import type { SampleRequest } from "./ToolContext.js";

/**
 * A `ctx.sample` request as a model receives it: each message's blocks as their text (a local model call takes
 * text), and only what the call sends. Asked again, it sends the same messages: a resumed run's tool journal keeps
 * this form of each request a call made (small, and plain JSON).
 */
export function plainSampleRequest(request: SampleRequest): SampleRequest {
  const messages = typeof request.messages === "string" ? [{ role: "user" as const, content: request.messages }] : request.messages;
  return {
    messages: messages.map((message) => ({ role: message.role, content: typeof message.content === "string" ? message.content : (Array.isArray(message.content) ? message.content : [message.content]).map((block: ContentBlock) => blockText(block)).join("\n") })),
    ...(request.systemPrompt !== undefined ? { systemPrompt: request.systemPrompt } : {}),
    ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.stopSequences !== undefined ? { stopSequences: request.stopSequences } : {}),
  };
}

/** Requests asked again only to be answered from a record (see `sampleReplay`). */
const replays = new WeakSet<SampleRequest>();

/**
 * A kept request asked again by a resumed run that replays the tool call which made it: its answer is taken from
 * the run's record, never from a model, so that the run counts (and its budget holds) what the call cost the first
 * time. A marked copy, so that a tool's own requests cannot pass for one.
 */
export function sampleReplay(request: SampleRequest): SampleRequest {
  const copy = { ...request };
  replays.add(copy);
  return copy;
}

export function isSampleReplay(request: SampleRequest): boolean {
  return replays.has(request);
}
