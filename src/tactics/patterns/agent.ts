import { Prompt } from "../../prompts/index.js";
import { outputContract } from "../outputParser.js";
import { patternAgent, singleAgent } from "../patternAgent.js";
import type { Pattern, PatternContext, PatternOutcome } from "./Pattern.js";

/** `tactic_type: agent`: one agent (the first, or `agent:`) opens a dialog, receives the prompt, and responds. */
export const agentPattern: Pattern = {
  agentsUsed: singleAgent,
  async run({ prepared, agents, vars, options }: PatternContext): Promise<PatternOutcome> {
    const { config } = prepared.tactic;
    const added = options.turn;
    const own = patternAgent(prepared, agents);
    const agent = added?.wrapModel ? own.with({ model: added.wrapModel(own.model) }) : own;
    const contract = config.output ? outputContract(config.output as Record<string, unknown>, config.name ?? "output") : undefined;
    const responseFormat = contract?.responseFormat ?? added?.responseFormat;
    const turn = new Prompt({ path: `${config.name ?? "tactic"}/input`, prompt: config.prompt, ...(contract ? { parser: contract.parser } : {}), ...(added?.tools ? { functionList: added.tools } : {}) });
    const dialog = agent.open("main", { promptArgs: vars });
    for (const message of options.history ?? []) dialog.add(message);
    const received = agent.receivePrompt(turn, vars);
    if (added?.media && added.media.length > 0) received.media = added.media;
    const message = await agent.respond({
      ...(options.signal ? { signal: options.signal } : {}),
      // Structured output is printed whole at the end, never streamed.
      ...(options.onText && !contract ? { onText: options.onText } : {}),
      ...(responseFormat ? { responseFormat } : {}),
    });
    return { output: contract ? message.parsed : message.content };
  },
};
