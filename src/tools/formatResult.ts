import { pythonRepr } from "../util/pythonRepr.js";
import type { FunctionCall } from "./FunctionCall.js";
import { asToolResult, toolResultText } from "./toolResult.js";

/**
 * The default text the model reads back after a successful call (seed 000, Step 2):
 *
 * ```
 * Return of calling function get_weather with arguments {'city': 'Paris'}:
 * ---
 * Sunny, 22 degrees celsius in Paris
 * ---
 * ```
 *
 * The arguments are quoted as a Python dict, as LLLM does. The body is a string result as-is; anything else is
 * JSON, not a Python repr: TypeScript tools return JS objects, and models read JSON reliably (and can copy values
 * out of it into the next call's arguments).
 */
export function formatResult(call: FunctionCall): string {
  return `Return of calling function ${call.name} with arguments ${pythonRepr(call.arguments)}:\n---\n${resultBody(call.result)}\n---`;
}

/**
 * What a string result was, from the text `formatResult` made of it: the body between the first `---` line and the
 * last (the arguments' repr holds no line break); `undefined` for a text of another shape.
 */
export function formattedBody(text: string): string | undefined {
  if (!text.startsWith("Return of calling function ") || !text.endsWith("\n---")) return undefined;
  const start = text.indexOf(":\n---\n");
  if (start === -1 || start + 6 > text.length - 4) return undefined;
  return text.slice(start + 6, text.length - 4);
}

/**
 * The result as text: strings as-is, a rich result (`toolResult`) as the text of its blocks (an image as
 * `[image: image/png, 68 bytes]`), everything else as JSON.
 */
export function resultBody(result: unknown): string {
  if (typeof result === "string") return result;
  const rich = asToolResult(result);
  if (rich) return toolResultText(rich);
  // A tool that returns nothing: JSON has no `undefined`, and an empty body reads like a truncated reply.
  if (result === undefined) return "null";
  try {
    return JSON.stringify(result) ?? String(result);
  } catch {
    // BigInt and circular values cannot be JSON; some text is better than failing a call that succeeded.
    return String(result);
  }
}
