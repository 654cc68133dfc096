import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { FunctionCall } from "../tools/FunctionCall.js";
import { isPlainObject } from "../tools/JsonSchema.js";
import { resultBody } from "../tools/formatResult.js";

/**
 * A finished lllm call as an MCP tool result. A failure is `isError: true` with the `Error: …` text the model
 * would have read. A success is the raw result as text (a string as it is, anything else as JSON) rather than
 * lllm's "Return of calling function …" block, which the client's model wraps its own way; a plain-object
 * result is also sent as `structuredContent` for clients that use data.
 */
export function toCallToolResult(call: FunctionCall): CallToolResult {
  if (call.error !== undefined) return { content: [{ type: "text", text: call.resultStr ?? `Error: ${call.error}` }], isError: true };
  return {
    content: [{ type: "text", text: resultBody(call.result) }],
    ...(isPlainObject(call.result) ? { structuredContent: call.result } : {}),
  };
}
