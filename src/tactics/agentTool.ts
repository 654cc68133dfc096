import type { Agent } from "../agent/index.js";
import { FunctionTool } from "../tools/index.js";

export interface AgentToolOptions {
  /** The agent's name: the tool's name. */
  name: string;
  /** The agent's `description`: what the model reads to decide when to call it. */
  description: string | undefined;
  /** A fresh copy of the agent for one call (no dialog; its model and tool calls counted under this tool). */
  fresh: () => Promise<Agent>;
}

/**
 * Another agent of the same tactic as a tool (`tools: [agent:summarizer]`): one `input` string parameter; each
 * call runs a fresh copy of that agent (its system prompt, tools and model) in a new dialog on the input, and the
 * tool's result is its answer. Unlike a tactic used as a tool, no pattern, prompt template or output schema of a
 * tactic is involved: it is the agent's own tool loop.
 */
export function agentTool({ name, description, fresh }: AgentToolOptions): FunctionTool {
  return new FunctionTool({
    name,
    description: description ?? `Ask the ${name} agent to do a task; it answers in text.`,
    properties: { input: { type: "string", description: `The task for ${name}, with everything it needs: it does not see this conversation` } },
    required: ["input"],
    // A resumed run calls it again: the agent's model and tool calls are answered from the run's journal.
    replaysInside: true,
    run: async (args, context) => {
      const agent = await fresh();
      agent.open("tool");
      agent.receive(String(args.input));
      return (await agent.respond(context.signal ? { signal: context.signal } : {})).content;
    },
  });
}
