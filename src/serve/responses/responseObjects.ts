import type { Response, ResponseFunctionToolCall, ResponseOutputItem, ResponseOutputMessage, ResponseUsage } from "openai/resources/responses/responses";
import type { ServedUsage } from "../answerText.js";
import type { ClientCall } from "../ServedRun.js";

/** What a response echoes of its request, and its identity. */
export interface ResponseHead {
  id: string;
  createdAt: number;
  model: string;
  instructions: string | null;
  previousResponseId: string | null;
  metadata: Record<string, string> | null;
  /** tools, tool_choice, text, temperature, top_p, max_output_tokens, parallel_tool_calls, as the request gave them. */
  echo: Record<string, unknown>;
}

export function responseUsage(usage: ServedUsage): ResponseUsage {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedPromptTokens },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

export function messageItem(id: string, text: string, status: ResponseOutputMessage["status"]): ResponseOutputMessage {
  return { id, type: "message", role: "assistant", status, content: status === "in_progress" && text === "" ? [] : [{ type: "output_text", text, annotations: [] }] };
}

export function functionCallItem(id: string, call: ClientCall, status: "in_progress" | "completed"): ResponseFunctionToolCall {
  return { id, type: "function_call", call_id: call.id, name: call.name, arguments: status === "in_progress" ? "" : call.arguments, status };
}

/** A response object as OpenAI writes it: its status, output items, usage and error, with what it echoes. */
export function responseObject(head: ResponseHead, state: { status: "in_progress" | "completed" | "failed" | "cancelled" | "incomplete"; output: ResponseOutputItem[]; usage?: ServedUsage; error?: { code: string; message: string } }): Response {
  const text = state.output.flatMap((item) => (item.type === "message" ? item.content.flatMap((part) => (part.type === "output_text" ? [part.text] : [])) : [])).join("");
  return {
    id: head.id,
    object: "response",
    created_at: head.createdAt,
    status: state.status,
    model: head.model,
    output: state.output,
    output_text: text,
    error: state.error ? ({ code: state.error.code, message: state.error.message } as Response["error"]) : null,
    incomplete_details: null,
    instructions: head.instructions,
    metadata: head.metadata,
    previous_response_id: head.previousResponseId,
    parallel_tool_calls: head.echo.parallel_tool_calls as boolean,
    temperature: head.echo.temperature as number | null,
    top_p: head.echo.top_p as number | null,
    max_output_tokens: head.echo.max_output_tokens as number | null,
    tool_choice: head.echo.tool_choice as Response["tool_choice"],
    tools: head.echo.tools as Response["tools"],
    text: head.echo.text as Response["text"],
    ...(state.status === "completed" ? { completed_at: Math.floor(Date.now() / 1000) } : {}),
    ...(state.usage ? { usage: responseUsage(state.usage) } : {}),
  };
}
