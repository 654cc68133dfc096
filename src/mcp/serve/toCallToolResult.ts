import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { FunctionCall } from "../../tools/FunctionCall.js";
import { isPlainObject } from "../../tools/JsonSchema.js";
import { resultBody } from "../../tools/formatResult.js";
import { asToolResult } from "../../tools/toolResult.js";

/**
 * A finished lllm call as an MCP tool result. A rich result (`toolResult`) goes as it is: its content blocks and
 * `structuredContent`. A failure is `isError: true` with the `Error: …` text the model would have read (a rich
 * error keeps its blocks). Any other success is the raw result as text (a string as it is, anything else as JSON)
 * rather than lllm's "Return of calling function …" block, which the client's model wraps its own way; a
 * plain-object result is also sent as `structuredContent` for clients that use data.
 */
export function toCallToolResult(call: FunctionCall): CallToolResult {
  const rich = asToolResult(call.result);
  if (call.error !== undefined) {
    if (rich?.isError) return { content: rich.content, isError: true };
    return { content: [{ type: "text", text: call.resultStr ?? `Error: ${call.error}` }], isError: true };
  }
  if (rich) return { content: rich.content, ...(rich.structuredContent !== undefined ? { structuredContent: rich.structuredContent } : {}) };
  return {
    content: [{ type: "text", text: resultBody(call.result) }],
    ...(isPlainObject(call.result) ? { structuredContent: call.result } : {}),
  };
}
