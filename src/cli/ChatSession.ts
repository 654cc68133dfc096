import type { AgentEvent, Message } from "../agent/index.js";
import type { Model, ModelMessage } from "../providers/Model.js";
import type { RetryNotice } from "../providers/requestWithRetries.js";
import type { ApprovalPolicy } from "../approval/index.js";
import type { McpClientHooks } from "../mcp/McpClientHooks.js";
import { loadProjectSettings, replySizeBytes, type AgentConfig } from "../config/index.js";
import { ConfigError } from "../errors.js";
import { prepareTactic, type BoundAgent, type PreparedTactic } from "../tactics/prepareTactic.js";
import { runRecorded, type RecordedRun, type RecordedRunOptions } from "../run/runRecorded.js";
import { runModels } from "../tactics/runModels.js";
import { assertTemplateVariables } from "../tactics/templateVariables.js";
import { didYouMean } from "../util/closest.js";
import { warnBrokenFiles } from "./loadRegistry.js";
import { warnUnknownModels } from "./models.js";
import { warn } from "./output.js";
import { resolveTacticTarget } from "./resolveTacticTarget.js";
import { addCost } from "../util/roundCost.js";
import { shellArgument } from "../util/shellArgument.js";
import { ASSISTANT_TACTIC } from "./assistantTactic.js";

export interface ChatSessionOptions {
  /** A tactic file or package ref; undefined: the plain assistant. */
  target?: string | undefined;
  /** `--agent`: the agent to talk to (default: the tactic's `agent:`, else its first). */
  agent?: string | undefined;
  model?: string | undefined;
  packages?: string[] | undefined;
  vars?: Record<string, string>;
  maxSteps?: number | undefined;
  /** `false`: record nothing (`--no-log`). */
  log?: boolean | undefined;
  approve: ApprovalPolicy;
  /** What answers MCP servers' progress, logs and questions (as for `lllm run`). */
  mcpHooks?: McpClientHooks | undefined;
  /** The dialog to go on with (`--continue`) and the run it ended. */
  history?: Message[] | undefined;
  continuesRun?: string | undefined;
}

/** One tool call of a turn, for the transcript. */
export interface ChatToolCall {
  name: string;
  arguments: Record<string, unknown>;
  error?: string;
}

/** One finished exchange, for `/save`. */
export interface ChatTurn {
  input: string;
  answer: string;
  toolCalls: ChatToolCall[];
}

export interface TurnOptions {
  signal: AbortSignal;
  /** The answer's text as it streams; without it the turn is not streamed (`--json` prints the answer whole). */
  onText?: (delta: string) => void;
  onEvent: (event: AgentEvent) => void;
  onModelRetry?: (notice: RetryNotice) => void;
}

/**
 * A conversation with one agent of a tactic. Each turn is one recorded run of the agent pattern that continues the
 * turn before it (`continues_run`), with the dialog so far as its history: the run store holds the conversation
 * as a chain of runs, so `lllm run --continue` and `lllm chat --continue` go on from its last turn, and `lllm logs`
 * lists every turn.
 */
export class ChatSession {
  history: Message[];
  readonly turns: ChatTurn[] = [];
  /** The run of the last answered turn (what the next turn continues). */
  lastRunId: string | undefined;
  /** Totals of the session, failed turns included: what `/cost` prints. */
  readonly spent = { llmCalls: 0, promptTokens: 0, completionTokens: 0, cost: 0 as number | null };
  /**
   * The session's `scripted:` models, by name: a script is the whole conversation's, so each turn goes on from the
   * turns the earlier ones used (a run of its own would replay the first turn again every time).
   */
  private readonly scriptedModels = new Map<string, Model>();

  private constructor(
    private prepared: PreparedTactic,
    readonly agent: string,
    private readonly options: ChatSessionOptions,
  ) {
    this.history = [...(options.history ?? [])];
    this.lastRunId = options.continuesRun;
  }

  static async start(options: ChatSessionOptions): Promise<ChatSession> {
    if (options.target === undefined && options.model === undefined) {
      const { settings } = await loadProjectSettings(process.cwd());
      if (settings.model === undefined) {
        throw new ConfigError("usage_chat_model", "lllm chat without a tactic needs a model", { location: { file: "--model" }, hint: "Pass --model NAME (e.g. gpt-4o-mini, ollama/llama3), set `model:` in the project settings, or name a tactic: lllm chat TACTIC" });
      }
    }
    const prepared = await ChatSession.prepare(options, options.model);
    assertChattable(prepared, options.target ?? prepared.tactic.file);
    const agent = options.agent ?? prepared.tactic.config.agent ?? prepared.agents[0]?.name;
    const names = prepared.agents.map((entry) => entry.name);
    if (agent === undefined) {
      throw new ConfigError("usage_chat_agent", `the tactic ${prepared.tactic.file} has no agent to talk to (its \`tactic_type\` is \`${prepared.tactic.config.tactic_type}\`)`, { location: { file: prepared.tactic.file }, hint: "Chat with a tactic that has agent_configs." });
    }
    if (!names.includes(agent)) {
      const guess = didYouMean(agent, names);
      throw new ConfigError("usage_chat_agent", `no agent \`${agent}\` in ${prepared.tactic.file}${guess ? `: ${guess}` : ""}`, { location: { file: "--agent" }, hint: `Its agents: ${names.join(", ")}.` });
    }
    const session = new ChatSession(prepared, agent, options);
    // A missing template variable would fail every turn: said once, before the first.
    assertTemplateVariables(session.chatTactic(), { ...(options.vars ?? {}) }, { hint: (name) => `Pass it with --var ${name}=VALUE, or add it to the tactic's \`vars:\`.` });
    return session;
  }

  private static async prepare(options: ChatSessionOptions, model: string | undefined): Promise<PreparedTactic> {
    const file = options.target === undefined ? ASSISTANT_TACTIC : await resolveTacticTarget(options.target, options.packages);
    const prepared = await prepareTactic(file, { ...(model !== undefined ? { model } : {}), ...(options.packages ? { packages: options.packages } : {}) });
    warnBrokenFiles(prepared.registry);
    warnUnknownModels(prepared.agents, prepared.settings.prices ?? {}, warn);
    return prepared;
  }

  /** The tactic's file (the plain assistant's for none). */
  get tacticFile(): string {
    return this.prepared.tactic.file;
  }

  get tacticName(): string {
    return this.options.target === undefined ? "assistant" : (this.prepared.tactic.config.name ?? this.options.target);
  }

  get boundAgent(): BoundAgent {
    return this.prepared.agents.find((entry) => entry.name === this.agent)!;
  }

  get model(): string {
    return this.boundAgent.config.model_name ?? "(none)";
  }

  /** `/model NAME`: the next turns use this model; the dialog so far is kept. */
  async setModel(model: string): Promise<void> {
    try {
      this.prepared = await ChatSession.prepare(this.options, model);
    } catch (error) {
      // The name was typed at /model, not given as --model, and it is the same name for every agent: say it once.
      if (!(error instanceof ConfigError)) throw error;
      const withoutAgent = (message: string): string => message.replace(/^agent `[^`]*`: /, "");
      const [first, ...rest] = error.problems;
      if (!first || ![first, ...rest].every((problem) => problem.location?.file === "--model" && withoutAgent(problem.message) === withoutAgent(first.message))) throw error;
      throw new ConfigError(error.code, `/model: ${withoutAgent(first.message)}`, first.hint ? { hint: first.hint } : {});
    }
  }

  /** `/reset`: a new conversation (the next turn continues nothing). */
  reset(): void {
    this.history = [];
    this.turns.length = 0;
    this.lastRunId = undefined;
  }

  /** Send one input; the dialog grows only when the agent answered. */
  async turn(input: string, options: TurnOptions): Promise<RecordedRun> {
    let lastSent: ModelMessage[] | undefined;
    const toolCalls: ChatToolCall[] = [];
    const runOptions: RecordedRunOptions = {
      input,
      vars: this.options.vars ?? {},
      ...(this.options.maxSteps !== undefined ? { maxSteps: this.options.maxSteps } : {}),
      signal: options.signal,
      ...(options.onText ? { onText: options.onText } : {}),
      ...(options.onModelRetry ? { onModelRetry: options.onModelRetry } : {}),
      onEvent: (event) => {
        if (event.type === "model_call" && event.agent === this.agent) lastSent = event.sent?.slice();
        if (event.type === "tool_call" && event.agent === this.agent) toolCalls.push({ name: event.call.name, arguments: event.call.arguments, ...(event.call.error !== undefined ? { error: event.call.error } : {}) });
        options.onEvent(event);
      },
      approve: this.options.approve,
      ...(this.options.mcpHooks ? { mcpHooks: this.options.mcpHooks } : {}),
      history: this.history,
      ...(this.lastRunId !== undefined ? { continuesRun: this.lastRunId } : {}),
      ...(this.options.log !== undefined ? { log: this.options.log } : {}),
      missingVariableHint: (name) => `Pass it with --var ${name}=VALUE when starting lllm chat.`,
      warn,
    };
    const ofThisRun = runModels(runOptions, replySizeBytes(this.prepared.settings.reply_size));
    runOptions.createModel = (config) => this.sessionModel(config, ofThisRun);
    const run = await runRecorded(this.chatTactic(), runOptions);
    this.spent.llmCalls += run.usage.llmCalls;
    this.spent.promptTokens += run.usage.promptTokens;
    this.spent.completionTokens += run.usage.completionTokens;
    this.spent.cost = addCost(this.spent.cost, run.cost);
    if (run.ok) {
      const answer = typeof run.result.output === "string" ? run.result.output : JSON.stringify(run.result.output);
      this.history = [...dialogOf(lastSent ?? [], this.agent), { role: "assistant", content: answer, name: this.agent }];
      this.turns.push({ input, answer, toolCalls });
      if (run.runId !== undefined) this.lastRunId = run.runId;
    }
    return run;
  }

  /** A `scripted:` model is the session's (made once, then shared by every turn); any other is the run's own. */
  private sessionModel(config: AgentConfig, ofThisRun: (config: AgentConfig) => Model): Model {
    const name = config.model_name ?? "";
    if (!name.startsWith("scripted:")) return ofThisRun(config);
    let model = this.scriptedModels.get(name);
    if (!model) this.scriptedModels.set(name, (model = ofThisRun(config)));
    return model;
  }

  /**
   * The tactic a turn runs: the agent pattern on the chosen agent, the input sent as typed (a tactic's `prompt`
   * template, `input` schema and `output` schema are for one-shot runs, not for a conversation).
   */
  chatTactic(): PreparedTactic {
    const { output: _output, input: _input, steps: _steps, ...config } = this.prepared.tactic.config;
    return { ...this.prepared, tactic: { ...this.prepared.tactic, config: { ...config, tactic_type: "agent", agent: this.agent, prompt: "{input}" } } };
  }
}

/**
 * The tactic types whose agent writes code that the pattern runs (a code-action program, notebook cells). A turn of
 * chat is the agent pattern on one agent, the dialog so far as its history: such an agent's reply would be shown as
 * text, never run. Their patterns are one-shot (a code-action run opens a fresh dialog for its one task; a notebook
 * runs to its end), so they are refused at the start rather than half-run.
 */
const UNCHATTABLE_TYPES: Readonly<Record<string, string>> = {
  "code-action": "its agent writes a Python program that the run executes",
  notebook: "its agent writes notebook cells that the run executes",
};

/** Refuse, before any model call, a tactic whose pattern a conversation cannot run. */
function assertChattable(prepared: PreparedTactic, target: string): void {
  const type = prepared.tactic.config.tactic_type;
  const why = Object.hasOwn(UNCHATTABLE_TYPES, type) ? UNCHATTABLE_TYPES[type] : undefined;
  if (why === undefined) return;
  throw new ConfigError("usage_chat_pattern", `lllm chat cannot run a tactic of tactic_type \`${type}\`: ${why}, and a chat would only print it; use lllm run`, {
    location: prepared.tactic.locate(["tactic_type"]) ?? { file: prepared.tactic.file },
    hint: `Run it with: lllm run ${shellArgument(target)} --input TEXT`,
  });
}

/** The dialog of the agent's last model call, without its system prompt, as the next turn's history. */
function dialogOf(sent: ModelMessage[], agent: string): Message[] {
  const messages: Message[] = [];
  for (const message of sent) {
    if (message.role === "user") messages.push({ role: "user", content: message.content, name: "user" });
    else if (message.role === "assistant" && message.toolCalls && message.toolCalls.length > 0) messages.push({ role: "tool_call", content: message.content ?? "", name: agent, toolCalls: message.toolCalls });
    else if (message.role === "assistant") messages.push({ role: "assistant", content: message.content ?? "", name: agent });
    else if (message.role === "tool") messages.push({ role: "tool", content: message.content, name: message.name ?? "tool", toolCallId: message.toolCallId, ...(message.isError ? { isError: true } : {}) });
  }
  return messages;
}
