import { formatLocation } from "../errors.js";
import { toolFailureOf, type FunctionCall } from "../tools/index.js";
import { terminalText } from "../util/terminalText.js";
import { paint } from "./output.js";

/**
 * For `--verbose`: where a tool that threw failed (its file:line) and the stack, on stderr. The model only ever
 * reads `Error: <message>`; this is for the person fixing the tool. Empty when the call did not throw.
 */
export function toolFailureText(call: FunctionCall): string {
  const failure = toolFailureOf(call);
  if (!failure) return "";
  const lines = [`  tool \`${terminalText(call.name)}\` threw${failure.location ? ` at ${formatLocation(failure.location)}` : ""}`];
  const stack = typeof failure.error === "object" && failure.error !== null ? (failure.error as { stack?: unknown }).stack : undefined;
  // The tool's own text, escaped before it is painted: not even a colour of its own reaches the terminal.
  if (typeof stack === "string") lines.push(paint("dim", terminalText(stack).replace(/^/gm, "    ")));
  else lines.push(paint("dim", `    thrown value (not an Error): ${terminalText(String(failure.error))}`));
  return lines.join("\n");
}
