import type { ContentBlock } from "./ContentBlock.js";
import type { JsonSchema } from "./JsonSchema.js";

/** Severity of a log message, lowest first (syslog's levels, as MCP names them). */
export type LogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** One message of a sampling request. */
export interface SampleMessage {
  role: "user" | "assistant";
  /** Text, or text/image/audio blocks. */
  content: string | ContentBlock | ContentBlock[];
}

/**
 * The answer length of a sampling request that names none (MCP requires one), and the cap on the answers to an MCP
 * server's sampling requests when its config gives no `sampling.max_tokens`.
 */
export const DEFAULT_SAMPLE_MAX_TOKENS = 1024;

/** A request for one model answer (`ctx.sample`). */
export interface SampleRequest {
  /** The conversation; a string is one user message. */
  messages: string | SampleMessage[];
  systemPrompt?: string;
  /** The most tokens the answer may have. Default 1024. */
  maxTokens?: number;
  temperature?: number;
  stopSequences?: string[];
  /** Hints for an MCP client choosing a model (MCP's `modelPreferences`); a local model ignores them. */
  modelPreferences?: { hints?: Array<{ name?: string }>; costPriority?: number; speedPriority?: number; intelligencePriority?: number };
}

/** The model's answer to a `SampleRequest`. */
export interface SampleResult {
  /** The text of the answer (its text blocks joined). */
  text: string;
  /** The answer as it came (MCP content). */
  content: ContentBlock[];
  /** The model that answered, when known. */
  model?: string;
  /** Why the answer ended: `endTurn`, `maxTokens`, `stopSequence`, … */
  stopReason?: string;
}

/**
 * A question for the user (`ctx.elicit`): a message and a flat form of primitive fields, as MCP elicitation
 * allows: strings (with `format`, `minLength`…), numbers, integers, booleans, single-choice enums (`enum`, or
 * `oneOf` of `{const, title}`) and multiple-choice ones (`type: array` with enum `items`), each with an optional
 * `title`, `description` and `default`.
 */
export interface ElicitRequest {
  message: string;
  requestedSchema: { type: "object"; properties: Record<string, JsonSchema>; required?: string[] };
}

/** The user's answer: `accept` with the form's values, `decline`, or `cancel` (dismissed). */
export interface ElicitResult {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, string | number | boolean | string[]>;
}

/**
 * What a running tool may use besides its arguments, as the caller gives it. Every field is optional here;
 * `FunctionTool.call` fills in what the caller left out with the local meaning (see `ToolRunContext`). More fields
 * may be added; tools should ignore unknown ones.
 */
export interface ToolContext {
  /** Aborted when the run is cancelled (Ctrl-C, a time budget, an MCP client's cancellation); long tools should stop. */
  signal?: AbortSignal;
  /** The working directory of the run. */
  cwd?: string;
  /** The environment the tool should see (command tools pass it to their process). */
  env?: NodeJS.ProcessEnv;
  /** Report progress: `done` so far, of `total` when known, with an optional message. */
  progress?: (done: number, total?: number, message?: string) => void | Promise<void>;
  /** Log a message (text, or any JSON value) at a level. */
  log?: (level: LogLevel, message: unknown) => void | Promise<void>;
  /** Ask a model for one answer. */
  sample?: (request: SampleRequest) => Promise<SampleResult>;
  /** Ask the user to fill in a small form. */
  elicit?: (request: ElicitRequest) => Promise<ElicitResult>;
}

/**
 * The context a tool's `run` receives: every capability present. Each has a local meaning and an MCP meaning when
 * the call came from an MCP client (`lllm mcp serve`):
 * - `progress`: a line on stderr (`progress 3/10: message`); over MCP, progress notifications when the client
 *   sent a progress token (values that do not increase are dropped, as MCP requires).
 * - `log`: a line on stderr (`info: message`); over MCP, log notifications at or above the client's level.
 * - `sample`: the model of the agent that called the tool (counted in the run's usage); over MCP, the client's
 *   model (sampling). Called outside any agent and outside MCP, it throws a ToolError.
 * - `elicit`: the user on the terminal when stdin and stderr are one; over MCP, the client asks its user. With
 *   nobody to ask it throws a ToolError (`elicitation_unavailable`).
 */
export type ToolRunContext = ToolContext & Required<Pick<ToolContext, "progress" | "log" | "sample" | "elicit">>;
