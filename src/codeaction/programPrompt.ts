import type { FunctionTool } from "../tools/index.js";
import { pythonSignature } from "./pythonSignature.js";

/**
 * What every program may rely on, for the code-action prompt and the tool_chain tool's description. The rules
 * are seed 002's: results are plain values, and prose results are parsed in code ("the model is told to parse
 * them"); use all the data; never count calls or stop early; the cap on calls exists but its value is never given
 * (told "at most N calls", models cut the data to fit and returned partial answers as if they were whole).
 */
export const PROGRAM_RULES = `- Results are plain Python values: dicts, lists, numbers and strings. A very large result arrives as a handle that behaves like its value (iterate it, index it, len() it); handle.load() returns the value, handle.materialize() writes it to a file and returns the path, and passing the handle to another function hands the data over without copying it into your program.
- A function that returns prose (a str of text rather than data) must be parsed by your program: extract the fields and numbers you need in code (string methods, re), never by reading the text yourself.
- A function that fails raises an exception (ToolError, MCPToolError) whose message gives the error's code and message.
- Use all the data the question needs: never skip, sample or truncate records, never count your own calls, and never stop early.
- Each program has a cap on function calls. If a call goes past it, the call raises ToolBudgetExceeded: do not catch it, let it raise.
- Compute the answer in code (loops, sums, filters, joins), not in your head.`;

/** The functions of `tools` as Python signatures with their descriptions, one block each. */
export function functionList(tools: readonly FunctionTool[]): string {
  return tools.map(pythonSignature).join("\n\n");
}

/**
 * The instructions of the code-action pattern, appended to the agent's system prompt: one program, in one
 * reply, over the tools listed as Python functions.
 */
export function programPrompt(tools: readonly FunctionTool[]): string {
  const functions = tools.length > 0 ? functionList(tools) : "(none: compute the answer from the question alone)";
  return `Answer by writing one Python program that calls the functions below and computes the answer. Reply with the whole program in a single \`\`\`python block; it runs once, in a fresh sandbox without network access, and nothing outside the block runs.

The functions are already defined: call them directly, or as tools.<name>(...), with keyword arguments.

${functions}

Rules:
${PROGRAM_RULES}
- Finish with final_answer(value) (a string, number, list or dict), or print the answer.`;
}
