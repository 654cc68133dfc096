import { ModelBehaviorError } from "../errors.js";
import { didYouMean } from "../util/closest.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";

/**
 * The model called a tool that was not offered on its turn (code `unknown_tool`). It ends the run: the model was
 * never shown such a tool, so either the prompt misleads it or the tool is missing from the configuration.
 */
export class UnknownToolError extends ModelBehaviorError {
  /** The name the model called. */
  readonly toolName: string;
  /** The tools offered on that model call, in order; empty when none were. */
  readonly offeredTools: string[];

  constructor(options: { agent: string; toolName: string; offeredTools: string[]; limitReached?: boolean }) {
    const { agent, toolName, offeredTools } = options;
    let offered: string;
    if (offeredTools.length > 0) offered = `the tools offered were: ${offeredTools.join(", ")}`;
    else if (options.limitReached) offered = "no tools were offered, because the limit of tool-call rounds was reached";
    else offered = "no tools were offered on this turn";
    const suggestion = didYouMean(toolName, offeredTools);
    // The model wrote the name: on one line (a line break in it is `\n`), so that it cannot forge the next line of
    // the error, or a line of lllm's own after it (`lllm: approval of a tool call: …`), on stderr or in the run log.
    const quoted = escapeControlCharacters(toolName, { all: true });
    super("unknown_tool", `agent \`${agent}\` called the tool \`${quoted}\`, which is not offered on this turn; ${offered}${suggestion ? ` (${suggestion})` : ""}`, {
      hint: `Add it to this agent's \`tools:\` list in the tactic file (under \`agent_configs\`, or \`global.tools\` for every agent), or say in the system prompt which tools exist. From code: the system prompt's functionList, or the turn prompt's (a turn prompt with agentTools: false offers only its own tools).`,
    });
    this.toolName = toolName;
    this.offeredTools = offeredTools;
  }
}
