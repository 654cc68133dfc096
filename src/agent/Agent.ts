import type { ApprovalPolicy } from "../approval/index.js";
import { ConfigError } from "../errors.js";
import type { ToolBudget } from "../limits/ToolBudget.js";
import type { Model, ResponseFormat } from "../providers/Model.js";
import { Prompt, type ToolResolver } from "../prompts/index.js";
import type { FunctionTool, ToolContext } from "../tools/index.js";
import type { AgentEvent } from "./AgentEvent.js";
import { Dialog } from "./Dialog.js";
import type { Message } from "./Message.js";
import { offeredTools } from "./offeredTools.js";
import { runToolLoop } from "./runToolLoop.js";
import type { Session } from "./Session.js";

/** `maxInterruptSteps: 0` means "no cap", which LLLM bounds at this many rounds. */
export const UNCAPPED_ROUNDS = 100;

/** The fields of an Agent. */
export interface AgentOptions {
  /** Names the agent's messages in dialogs and events. */
  name: string;
  /** The system prompt; its tools are offered on every turn. A string becomes a Prompt at `<name>/system`. */
  systemPrompt: Prompt | string;
  model: Model;
  /** Extra request fields for every model call (temperature, max_tokens, …). */
  modelArgs?: Record<string, unknown>;
  /** Rounds of tool calls per respond() before the model must answer without tools. Default 5; 0 means 100. */
  maxInterruptSteps?: number;
  /** How many times a reply that fails to parse is sent back to be fixed. Default 3. */
  maxExceptionRetry?: number;
  /** Binds tool names and declarations in prompts' `functionList` to implementations, by exact name. */
  resolveTool?: ToolResolver;
  /** Ask for JSON on every respond() (a respond() may override it); the reply is parsed into `message.parsed`. */
  responseFormat?: ResponseFormat;
  /** Progress, traces, warnings. Called synchronously; keep it quick. */
  onEvent?: (event: AgentEvent) => void;
  /** Given to every tool call; a respond()'s `signal` is added to it. */
  toolContext?: ToolContext;
  /**
   * The run's budget, asked before each tool call (a `RunBudget`: its `guardModel(model, name)` counts the model
   * calls; `buildAgents` does both). Without one, tool calls are not counted.
   */
  budget?: ToolBudget;
  /**
   * Decides each call to a tool that needs approval (`approval: "required"`). Default: refuse them all; the
   * model reads the refusal.
   */
  approve?: ApprovalPolicy;
}

/** The options of one respond(). */
export interface RespondOptions {
  /** Return the whole Session (calls by round, usage, duration) instead of the final Message. */
  returnSession?: boolean;
  /** Cancels the model calls and is passed to the tools. */
  signal?: AbortSignal;
  /** Called with each piece of answer text as the model streams it. */
  onText?: (delta: string) => void;
  /** Overrides the agent's responseFormat for this respond(). */
  responseFormat?: ResponseFormat;
}

/**
 * An LLM agent (LLLM's `Agent`): a system prompt, a model, and dialogs it takes part in. `open()` starts a dialog,
 * `receive()`/`receivePrompt()` add the user's turn, `respond()` runs the tool-call loop until the model answers.
 */
export class Agent {
  readonly name: string;
  readonly systemPrompt: Prompt;
  readonly model: Model;
  readonly modelArgs: Record<string, unknown> | undefined;
  readonly maxInterruptSteps: number;
  readonly maxExceptionRetry: number;
  readonly resolveTool: ToolResolver | undefined;
  readonly responseFormat: ResponseFormat | undefined;
  readonly onEvent: ((event: AgentEvent) => void) | undefined;
  readonly toolContext: ToolContext;
  readonly budget: ToolBudget | undefined;
  readonly approve: ApprovalPolicy | undefined;
  #dialog: Dialog | undefined;
  /** Binding resolves names through the registry and compiles validators: do it once per prompt. */
  readonly #boundTools = new WeakMap<Prompt, FunctionTool[]>();
  #warnedUncapped = false;

  constructor(options: AgentOptions) {
    this.name = options.name;
    this.systemPrompt = typeof options.systemPrompt === "string" ? new Prompt({ path: `${options.name}/system`, prompt: options.systemPrompt }) : options.systemPrompt;
    this.model = options.model;
    this.modelArgs = options.modelArgs;
    this.maxInterruptSteps = count(options.maxInterruptSteps, 5, "maxInterruptSteps", options.name);
    this.maxExceptionRetry = count(options.maxExceptionRetry, 3, "maxExceptionRetry", options.name);
    this.resolveTool = options.resolveTool;
    this.responseFormat = options.responseFormat;
    this.onEvent = options.onEvent;
    this.toolContext = options.toolContext ?? {};
    this.budget = options.budget;
    this.approve = options.approve;
  }

  /** The dialog that receive() and respond() work on: the one opened last. */
  get currentDialog(): Dialog {
    if (!this.#dialog) {
      throw new ConfigError("dialog_not_open", `agent \`${this.name}\` has no open dialog`, { hint: "Call agent.open(topic) before receive() or respond()." });
    }
    return this.#dialog;
  }

  /**
   * A new agent with this one's settings and some replaced (a pattern that rewrites the system prompt, say). The
   * copy has no dialog; every option not overridden is carried over, so the two cannot drift apart.
   */
  with(overrides: Partial<AgentOptions>): Agent {
    return new Agent({
      name: this.name,
      systemPrompt: this.systemPrompt,
      model: this.model,
      ...(this.modelArgs ? { modelArgs: this.modelArgs } : {}),
      maxInterruptSteps: this.maxInterruptSteps,
      maxExceptionRetry: this.maxExceptionRetry,
      ...(this.resolveTool ? { resolveTool: this.resolveTool } : {}),
      ...(this.responseFormat ? { responseFormat: this.responseFormat } : {}),
      ...(this.onEvent ? { onEvent: this.onEvent } : {}),
      toolContext: this.toolContext,
      ...(this.budget ? { budget: this.budget } : {}),
      ...(this.approve ? { approve: this.approve } : {}),
      ...overrides,
    });
  }

  /** Start a dialog on `topic` with the system prompt, formatted with `promptArgs`; it becomes the current one. */
  open(topic: string, options: { promptArgs?: Record<string, unknown> } = {}): Dialog {
    const dialog = new Dialog(topic);
    dialog.add({ role: "system", content: this.systemPrompt.format(options.promptArgs ?? {}), name: "system" });
    this.#dialog = dialog;
    return dialog;
  }

  /** Add the user's text as it is. The next respond() offers the agent's own tools and parses nothing. */
  receive(text: string): Message {
    const dialog = this.currentDialog;
    dialog.turnPrompt = undefined;
    return dialog.add({ role: "user", content: text, name: "user" });
  }

  /** Add a turn prompt formatted with `args`; its tools and parser govern the next respond(). */
  receivePrompt(prompt: Prompt, args: Record<string, unknown> = {}): Message {
    const dialog = this.currentDialog;
    const message = dialog.add({ role: "user", content: prompt.format(args), name: "user" });
    dialog.turnPrompt = prompt;
    return message;
  }

  /**
   * Run the tool-call loop on the current dialog until the model answers in text; return that message (or the
   * Session). Throws a ConfigError when a prompt's tool cannot be bound (before any model call), a
   * ModelBehaviorError for an unknown tool or a reply that never parses, and whatever the model throws.
   */
  respond(options: RespondOptions & { returnSession: true }): Promise<Session>;
  respond(options?: RespondOptions & { returnSession?: false }): Promise<Message>;
  respond(options?: RespondOptions): Promise<Message | Session>;
  async respond(options: RespondOptions = {}): Promise<Message | Session> {
    const dialog = this.currentDialog;
    const turnPrompt = dialog.turnPrompt;
    const offered = offeredTools({
      agentTools: this.#tools(this.systemPrompt),
      turnTools: turnPrompt ? this.#tools(turnPrompt) : [],
      includeAgentTools: turnPrompt?.agentTools ?? true,
    });
    // Provider-side MCP servers: the system prompt's on every turn, plus the turn prompt's (same rule as tools).
    const hostedTools = [...((turnPrompt?.agentTools ?? true) ? this.systemPrompt.mcpServersList : []), ...(turnPrompt?.mcpServersList ?? [])].map((server) => server.toTool());
    const session = await runToolLoop({
      agent: this.name,
      model: this.model,
      dialog,
      offered,
      hostedTools,
      turnPrompt,
      maxRounds: this.#maxRounds(),
      maxExceptionRetry: this.maxExceptionRetry,
      modelArgs: this.modelArgs,
      responseFormat: options.responseFormat ?? this.responseFormat,
      signal: options.signal,
      onText: options.onText,
      onEvent: this.onEvent,
      toolContext: this.toolContext,
      budget: this.budget,
      approve: this.approve,
    });
    return options.returnSession ? session : session.message;
  }

  #tools(prompt: Prompt): FunctionTool[] {
    let tools = this.#boundTools.get(prompt);
    if (!tools) {
      tools = prompt.tools(this.resolveTool);
      this.#boundTools.set(prompt, tools);
    }
    return tools;
  }

  #maxRounds(): number {
    if (this.maxInterruptSteps > 0) return this.maxInterruptSteps;
    if (!this.#warnedUncapped) {
      this.#warnedUncapped = true;
      this.onEvent?.({
        type: "warning",
        agent: this.name,
        message: `agent \`${this.name}\` has max_interrupt_steps 0: allowing up to ${UNCAPPED_ROUNDS} rounds of tool calls per response; set a cap (e.g. max_interrupt_steps: 5)`,
      });
    }
    return UNCAPPED_ROUNDS;
  }
}

/** A whole number ≥ 0, or the default; anything else is the author's mistake, reported before any model call. */
function count(value: number | undefined, fallback: number, key: string, agent: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0) {
    throw new ConfigError("agent_invalid", `agent \`${agent}\`: \`${key}\` must be a whole number ≥ 0, got ${JSON.stringify(value)}`);
  }
  return value;
}
