import type { McpClientHooks } from "../mcp/McpClientHooks.js";
import type { Agent, AgentEvent, Message } from "../agent/index.js";
import type { ApprovalPolicy } from "../approval/index.js";
import type { ArtifactRecord, CodeActionReport, ProgramRecord } from "../codeaction/index.js";
import type { AgentConfig } from "../config/index.js";
import type { RunBudget, RunLimits, SpendReport } from "../limits/index.js";
import type { RunLimitName } from "../errors.js";
import type { FallbackNotice } from "../providers/FallbackModel.js";
import type { MediaAttachment, Model, ResponseFormat } from "../providers/Model.js";
import type { FunctionTool, ToolContext } from "../tools/index.js";
import type { RetryNotice } from "../providers/requestWithRetries.js";
import type { PreparedTactic } from "./prepareTactic.js";

/** One tool call of a run. */
export interface ToolCallRecord {
  agent: string;
  name: string;
  arguments: Record<string, unknown>;
  result: unknown;
  error: string | null;
  durationMs: number;
}

/** One model call of a run: which agent made it and which model answered (a fallback chain's may change). */
export interface ModelCallRecord {
  agent: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
}

/** Tokens and model calls of a whole run. */
export interface RunUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  llmCalls: number;
}

/** What a tactic run returns; `lllm run --json` prints it (see tacticResultJson). */
export interface TacticResult {
  /** The answer: text, or the validated object when the tactic declares an `output` schema. */
  output: unknown;
  usage: RunUsage;
  toolCalls: ToolCallRecord[];
  /** Every model call, in order, with the model that answered it. */
  modelCalls: ModelCallRecord[];
  /** What the run tree spent, in all, by agent and by tool (nested tactics, programs and agents used as tools included). */
  spend: SpendReport;
  /** The limits the run ran under (the tactic's `limits:`, with the caller's over them); absent without any. */
  limits?: RunLimits;
  durationMs: number;
  /** A code-action run: its programs and every bridged call (seed 002's report). */
  codeAction?: CodeActionReport;
  /** The scripts agents ran with `tool_chain`, in order, with their bridged calls. */
  toolChains?: ProgramRecord[];
  /** Large results and files programs stored, kept under `$LLLM_HOME/runs/<run id>/artifacts/`. */
  artifacts?: ArtifactRecord[];
  /** With `dryRun`: the body of the first model request, exactly as the provider would send it (nothing was sent). */
  dryRunRequest?: Record<string, unknown>;
}

export interface RunOptions {
  /** The input: text, or (with an object `input` schema) a JSON text or a value. */
  input: unknown;
  /** Template arguments (`--var key=value`), over the tactic's `vars` defaults. */
  vars?: Record<string, string>;
  /** Overrides every agent's `max_interrupt_steps`. */
  maxSteps?: number;
  signal?: AbortSignal;
  /** Streams the final answer's text. */
  onText?: (delta: string) => void;
  /** Every agent event of the run. */
  onEvent?: (event: AgentEvent) => void;
  /** Builds the model of an agent; default: `createModel` from the agent's config. */
  createModel?: (config: AgentConfig) => Model | Promise<Model>;
  /**
   * Wraps each tool an agent is offered, as `createModel` wraps its model: `lllm batch --provider-batch` keeps the
   * results of an item's calls, so that the item run again from its start replays them instead of running them twice.
   */
  wrapTool?: (tool: FunctionTool, agent: string) => FunctionTool;
  /** Seconds a model request may go without progress, for every agent (over their `timeout`); `--timeout`. */
  modelTimeout?: number;
  /** Told before each retry of a failed model request (`--verbose` prints each). */
  onModelRetry?: (notice: RetryNotice) => void;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * Decides calls to tools that need approval (declared `approval: required`, or in the tactic's
   * `require_approval`), in the tool loop and from programs (code-action, tool_chain) alike. Default: refuse them
   * all (`lllm run` asks on a terminal, or follows `--approve`).
   */
  approve?: ApprovalPolicy;
  /**
   * The run's id: programs' large results and files go to `$LLLM_HOME/runs/<runId>/artifacts/`. `runRecorded`
   * passes the run store's id; by default a new one. Letters, digits, `_` and `-`.
   */
  runId?: string;
  /** The notebook pattern writes its cells and outputs to this file as a Jupyter notebook (nbformat 4). */
  notebookOut?: string;
  /**
   * The agent pattern: an earlier dialog to continue (`lllm run --continue`), added after the system prompt and
   * before this run's turn.
   */
  history?: Message[];
  /**
   * Model arguments under every agent's `model_args` (an agent's own win), nested tactics' agents included: `lllm
   * serve` passes a client's `temperature`, `top_p`, `seed`, `stop` and answer-token limit where the tactic sets none.
   */
  modelArgs?: Record<string, unknown>;
  /**
   * The agent pattern: the caller's additions to this run's turn of its agent (not passed on to tactics used as
   * tools). `lllm serve` offers a client's own function tools here and asks for its response format.
   */
  turn?: TurnOptions;
  /**
   * Build the first model request and answer it as `dryRunRequest` instead of sending it (`lllm run --dry-run`):
   * no model is called, no key is needed.
   */
  dryRun?: boolean;
  /**
   * Limits of the whole run, over the tactic's `limits:` (`lllm run --max-cost` and its siblings). Not passed on to
   * tactics used as tools: the run's budget holds for them.
   */
  limits?: RunLimits;
  /**
   * Where each of `limits` was set, for the message of a limit reached (`header x-lllm-max-tokens`); default the
   * CLI's flag (`--max-tokens`).
   */
  limitSources?: Partial<Record<RunLimitName, string>>;
  /**
   * The budget of the run tree this run belongs to, with the limits that apply already set: a caller that wants to
   * read it after the run (or count its own model calls in it, as judges do) starts one (`RunBudget.start`) and
   * passes it. Default: a new one with the tactic's `limits:` and `limits`.
   */
  budget?: RunBudget;
  /**
   * What this run's agents are named under, everywhere their name goes (events, `tool_calls`, `model_calls`,
   * `usage.by_agent`, the run store, cassettes, scripted replays): `<tool>/` for a tactic used as a tool, so that its
   * agent `writer` is `brief/writer` (nested twice: `outer/inner/writer`). Set by the tactic tool; default none.
   */
  agentPrefix?: string;
  /** Told when a fallback chain's model failed and a later one answered for an agent (default: a warning event). */
  onModelFallback?: (notice: FallbackNotice & { agent: string }) => void;
  /**
   * Called once the run's checks passed (missing template variables), before any agent is built: `lllm run` opens
   * its run log here, so that a run stopped by a check is not recorded. Not passed on to tactics used as tools.
   */
  onStart?: () => void | Promise<void>;
  /**
   * What the run's MCP clients do for servers' questions, logs, progress and sign-ins (`lllm run` asks on the
   * terminal, prints progress, and logs with --verbose). Sampling is answered with the agent's model unless a
   * `sample` hook is given; roots default to the run's working folder.
   */
  mcpHooks?: McpClientHooks;
}

/** What a caller adds to the one turn of the agent pattern's agent (see `RunOptions.turn`). */
export interface TurnOptions {
  /** Offered on this turn beside the agent's own tools (the turn's version wins on a name clash). */
  tools?: FunctionTool[];
  /** Asked for when the tactic declares no `output` schema (one that does answers in its own). */
  responseFormat?: ResponseFormat;
  /** Wraps the agent's model for this turn (a caller's `tool_choice`). */
  wrapModel?: (model: Model) => Model;
  /** Images sent with the turn's user message (a served request's image parts), after its text. */
  media?: MediaAttachment[];
}

/** A prepared tactic to build fresh agents for, with the run's options and event sink. */
export interface AgentsRequest {
  prepared: PreparedTactic;
  options: RunOptions;
  onEvent: (event: AgentEvent) => void;
}

/**
 * How a tactic used as a tool runs its tactic. The run passes itself down (rather than the tool importing the run),
 * so that the run, the agents it builds and the tools they get form no import cycle.
 */
export interface TacticRunner {
  /** `context`: the tool call's, when the tactic is called as a tool (a served tactic's runner reads its caller there). */
  run(prepared: PreparedTactic, options: RunOptions, context?: ToolContext): Promise<TacticResult>;
  /** Fresh agents for one call, closed (kernels, MCP servers) when `use` settles. */
  withAgents<T>(request: AgentsRequest, use: (agents: Map<string, Agent>) => Promise<T>): Promise<T>;
}
