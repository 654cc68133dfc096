import type { Agent } from "../agent/index.js";
import { Prompt } from "../prompts/index.js";
import type { FunctionTool } from "../tools/index.js";
import { programPrompt } from "./programPrompt.js";

/**
 * The agent that writes programs: the same model, settings and system prompt as `agent`, with the program
 * instructions and the tools as Python functions appended, and no tools offered to the model (they are called
 * from the program). Returns it with the tools it lists.
 */
export function codeActionAgent(agent: Agent): { agent: Agent; tools: FunctionTool[] } {
  const tools = agent.systemPrompt.tools(agent.resolveTool);
  // The appended text is literal: braces in the Python signatures must not read as placeholders.
  const instructions = programPrompt(tools).replaceAll("{", "{{").replaceAll("}", "}}");
  const base = agent.systemPrompt.prompt.trim();
  const systemPrompt = new Prompt({ path: agent.systemPrompt.path, prompt: base === "" ? instructions : `${base}\n\n${instructions}` });
  const programmer = agent.with({ systemPrompt });
  return { agent: programmer, tools };
}
