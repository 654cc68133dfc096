import { blockText, type ContentBlock } from "./ContentBlock.js";
import type { SampleRequest } from "./ToolContext.js";

/** A sample request whose messages are text. */
export type PlainSampleRequest = Omit<SampleRequest, "messages" | "modelPreferences"> & { messages: Array<{ role: "user" | "assistant"; content: string }> };

/**
 * A `ctx.sample` request as a model receives it: each message's blocks as their text (a local model call takes
 * text), and only what the call sends. Asked again, it sends the same messages: a resumed run's tool journal keeps
 * this form of each request a call made (small, and plain JSON).
 */
export function plainSampleRequest(request: SampleRequest): PlainSampleRequest {
  const messages = typeof request.messages === "string" ? [{ role: "user" as const, content: request.messages }] : request.messages;
  return {
    messages: messages.map((message) => ({ role: message.role, content: typeof message.content === "string" ? message.content : (Array.isArray(message.content) ? message.content : [message.content]).map((block: ContentBlock) => blockText(block)).join("\n") })),
    ...(request.systemPrompt !== undefined ? { systemPrompt: request.systemPrompt } : {}),
    ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.stopSequences !== undefined ? { stopSequences: request.stopSequences } : {}),
  };
}

/**
 * Where a request comes from when a resumed run's record may answer it (see `markSample`): `replay`, asked again
 * only to be counted, for a tool call whose outcome is replayed; `rerun`, made by a call cut short by the stop that
 * runs again, which gets the recorded answer to a request it made then instead of paying for it twice.
 */
export type SampleOrigin = "replay" | "rerun";

const origins = new WeakMap<SampleRequest, SampleOrigin>();

/**
 * A copy of the request, marked as coming from `origin`: the model of a resumed run answers it from the record (a
 * `replay` from the record alone, never from a model). A marked copy, so that a tool's own requests cannot pass for
 * one; every other request names no agent and is never answered from a record.
 */
export function markSample(request: SampleRequest, origin: SampleOrigin): SampleRequest {
  const copy = { ...request };
  origins.set(copy, origin);
  return copy;
}

export function sampleOrigin(request: SampleRequest): SampleOrigin | undefined {
  return origins.get(request);
}
