import type { HostedTool } from "../providers/Model.js";
import { ConfigError } from "../errors.js";
import { toFunctionTool, type FunctionTool } from "../tools/index.js";
import { bindTools, type ToolResolver } from "./bindTools.js";
import { formatTemplate, templatePlaceholders } from "./formatTemplate.js";

/** What a parser gets besides the reply text. */
export interface ParserContext {
  /** The name of the agent that replied. */
  agent: string;
  /** The prompt whose parser runs. */
  prompt: Prompt;
}

/**
 * Turns a reply into data (`message.parsed`). Throw a `ParseError` to have the model try again with your
 * message; anything else thrown is a bug in the parser and ends the run.
 */
export type PromptParser = (content: string, context: ParserContext) => unknown;

/** The fields of a Prompt. */
export interface PromptOptions {
  /** Where the prompt comes from, e.g. `weather_bot/system` or a package ref; used in messages. */
  path: string;
  /** The template: `{name}` placeholders, `{{` and `}}` for literal braces. */
  prompt: string;
  /**
   * Tools offered while this prompt drives the dialog: on every turn for a system prompt, on its own turn for a
   * turn prompt. A string is a declaration by name, bound through the agent's `resolveTool`.
   */
  functionList?: Array<FunctionTool | string>;
  /** Remote MCP servers the provider calls itself (seed Step 9): `new MCP({...})` declarations. */
  mcpServersList?: Array<{ toTool(): HostedTool }>;
  /** On a turn prompt: `false` offers only this prompt's tools (maybe none), not the agent's. Default `true`. */
  agentTools?: boolean;
  /** Parses the reply to this prompt's turn (see PromptParser). */
  parser?: PromptParser;
}

/**
 * A prompt template plus what governs the turn it drives: its tools and the parser of the reply (LLLM's
 * `Prompt`). A system prompt's tools are the agent's own; a turn prompt's tools add to them for one turn.
 */
export class Prompt {
  readonly path: string;
  readonly prompt: string;
  readonly functionList: Array<FunctionTool | string>;
  readonly agentTools: boolean;
  readonly mcpServersList: Array<{ toTool(): HostedTool }>;
  readonly parser: PromptParser | undefined;

  constructor(options: PromptOptions) {
    if (typeof options.path !== "string" || options.path === "") throw invalid("a prompt needs a `path` (a non-empty string)");
    if (typeof options.prompt !== "string") throw invalid(`prompt \`${options.path}\` needs \`prompt\` (the template text, a string)`);
    if (options.parser !== undefined && typeof options.parser !== "function") throw invalid(`prompt \`${options.path}\`: \`parser\` must be a function (content, context) => value`);
    this.path = options.path;
    this.prompt = options.prompt;
    this.functionList = (options.functionList ?? []).map((entry, index) => {
      if (typeof entry === "string") return entry;
      // A tool made by another copy of the tools module fails `instanceof`; toFunctionTool recognises it.
      const tool = toFunctionTool(entry);
      if (!tool) throw invalid(`prompt \`${options.path}\`: functionList[${index}] is neither a tool nor a tool name`);
      return tool;
    });
    this.agentTools = options.agentTools ?? true;
    this.mcpServersList = options.mcpServersList ?? [];
    this.parser = options.parser;
  }

  /** The template filled in; a missing argument is a `prompt_missing_argument` ConfigError. */
  format(args: Record<string, unknown> = {}): string {
    return formatTemplate(this.prompt, args, { path: this.path });
  }

  /** The placeholder names of the template, each once, in order of first use. */
  placeholders(): string[] {
    return templatePlaceholders(this.prompt);
  }

  /** The names in `functionList`, as declared (a string entry as written). */
  get functionNames(): string[] {
    return this.functionList.map((entry) => (typeof entry === "string" ? entry : entry.name));
  }

  /** The runnable tools of `functionList`, declarations bound through `resolveTool` (see `bindTools`). */
  tools(resolveTool?: ToolResolver): FunctionTool[] {
    return bindTools(this.functionList, { path: this.path, resolveTool });
  }
}

function invalid(message: string): ConfigError {
  return new ConfigError("prompt_invalid", message);
}
