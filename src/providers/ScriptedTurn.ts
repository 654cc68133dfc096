import type { ConfigProblem } from "../errors.js";
import type { ProviderCarry, ToolCallRequest, Usage } from "./Model.js";
import { isPlainObject } from "../util/isPlainObject.js";

/**
 * One scripted model answer, shared by `ScriptedModel` and the mock OpenAI server. A plain string is a text
 * answer. Keys are snake_case so that a script file reads like the wire format it stands for.
 */
export type ScriptedTurn =
  | string
  | {
      text?: string;
      tool_calls?: ScriptedToolCall[];
      /**
       * Token counts to report; when absent, a rough estimate (4 characters a token) is reported. The cached, reasoning
       * and cache-write counts (parts of the two totals) and `batch` (billed at the batch price) are optional.
       */
      usage?: { prompt_tokens: number; completion_tokens: number; cached_prompt_tokens?: number; reasoning_tokens?: number; cache_write_prompt_tokens?: number; batch?: boolean };
      /**
       * The model that answered, when it is not the one the agent asked first (a fallback chain moved on): the answer
       * is reported, and priced, as that model's. Written by a run's journal (`lllm run --resume`).
       */
      model?: string;
      /** What the provider wants back with the answer's tool calls (`ModelResponse.carry`). Written by a run's journal. */
      carry?: ProviderCarry;
      /** Why the answer ended; by default `tool_calls` when it has tool calls, else `stop`. `length` stands for an
       * answer cut off at the output token limit, `content_filter` for one the provider withheld. */
      finish_reason?: FinishReason;
      /**
       * The messages this turn answered, when they do not simply continue the turn above it in the agent's list
       * (a new dialog). Written by `lllm logs replay` and `lllm test --record`; a replay then checks that the
       * model would be sent the same, and fails with a diff when it would not.
       */
      request?: ScriptedMessage[];
      /** The messages sent after the turn above's reply and tool results (e.g. the user's next turn). */
      added?: ScriptedMessage[];
      /** The names of the tools offered with the request, when they differ from the turn above's. */
      offered?: string[];
    };

/**
 * A script: one list of turns that every agent takes from in call order, or a list per agent (by the agent's
 * name, as `ModelRequest.agent` gives it): agents running at once or nested (a tactic used as a tool) then each
 * replay their own turns whatever the order across agents.
 */
export type Script = readonly ScriptedTurn[] | { agents: Readonly<Record<string, readonly ScriptedTurn[]>> };

/** A message of a recorded request, as a script file holds it (the wire format's snake_case keys). */
export interface ScriptedMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  /** An assistant message's tool calls: `arguments` an object when it was JSON, else the raw text. */
  tool_calls?: Array<{ id: string; name: string; arguments: Record<string, unknown> | string }>;
  /** A tool message: the call it answers, and the tool's name. */
  tool_call_id?: string;
  name?: string;
}

export type FinishReason = "stop" | "tool_calls" | "length" | "content_filter";
const FINISH_REASONS: readonly FinishReason[] = ["stop", "tool_calls", "length", "content_filter"];

/** A tool call in a scripted turn. `arguments` is an object (sent as JSON) or raw text (sent as is, so a test can
 * script malformed JSON from the model). `id` defaults to `call_<call>_<index>`. */
export interface ScriptedToolCall {
  name: string;
  arguments?: Record<string, unknown> | string;
  id?: string;
  /**
   * The result text the tool gave when this turn was recorded (`lllm logs replay`). When set, `ScriptedModel`
   * checks that the next request carries the same result for this call, so a replay whose tools now answer
   * differently fails at the turn that diverged instead of going on with a dialog the script no longer fits.
   */
  result?: string;
}

/** A turn with the defaults filled in, ready to be sent. */
export interface ResolvedTurn {
  text: string | null;
  toolCalls: ToolCallRequest[];
  usage: Usage;
  finishReason: FinishReason;
  /** The model that answered, when the turn says (see `ScriptedTurn.model`). */
  model?: string;
  carry?: ProviderCarry;
}

/** Rough token count used when a turn gives no usage: deterministic, so tests can assert on it. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/**
 * Fill in a turn's defaults. `callNumber` (1-based) makes default tool-call ids unique across a script;
 * `promptText` is what the estimated prompt usage is counted from (made only when the turn gives no usage).
 */
export function resolveTurn(turn: ScriptedTurn, callNumber: number, promptText: string | (() => string)): ResolvedTurn {
  const spec = typeof turn === "string" ? { text: turn } : turn;
  const toolCalls = (spec.tool_calls ?? []).map((call, index) => ({
    id: call.id ?? `call_${callNumber}_${index}`,
    name: call.name,
    arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }));
  const text = spec.text ?? (toolCalls.length > 0 ? null : "");
  const answerText = (text ?? "") + toolCalls.map((call) => call.name + call.arguments).join("");
  return {
    text,
    toolCalls,
    usage: spec.usage ? usageOf(spec.usage) : { promptTokens: estimateTokens(typeof promptText === "string" ? promptText : promptText()), completionTokens: estimateTokens(answerText) },
    finishReason: spec.finish_reason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
    ...(spec.model !== undefined ? { model: spec.model } : {}),
    ...(spec.carry !== undefined ? { carry: spec.carry } : {}),
  };
}

function usageOf(usage: NonNullable<Exclude<ScriptedTurn, string>["usage"]>): Usage {
  return {
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens,
    ...(usage.cached_prompt_tokens ? { cachedPromptTokens: usage.cached_prompt_tokens } : {}),
    ...(usage.reasoning_tokens ? { reasoningTokens: usage.reasoning_tokens } : {}),
    ...(usage.cache_write_prompt_tokens ? { cacheWritePromptTokens: usage.cache_write_prompt_tokens } : {}),
    ...(usage.batch ? { batch: true } : {}),
  };
}

/** Split text into at most `pieces` chunks (by code point, never inside a surrogate pair), as a stream would. */
export function splitIntoChunks(text: string, pieces = 3): string[] {
  const characters = Array.from(text);
  if (characters.length === 0) return [];
  const size = Math.max(1, Math.ceil(characters.length / pieces));
  const chunks: string[] = [];
  for (let start = 0; start < characters.length; start += size) chunks.push(characters.slice(start, start + size).join(""));
  return chunks;
}

const TURN_KEYS = ["text", "tool_calls", "usage", "finish_reason", "request", "added", "offered", "model"];
const OPTIONAL_USAGE = ["cached_prompt_tokens", "reasoning_tokens", "cache_write_prompt_tokens"];
const TOOL_CALL_KEYS = ["name", "arguments", "id", "result"];
const MESSAGE_KEYS = ["role", "content", "tool_calls", "tool_call_id", "name"];
const ROLES = ["system", "user", "assistant", "tool"];


/** A problem at a path inside a script, e.g. `[2].tool_calls[0].name`. */
export interface ScriptProblem {
  path: Array<string | number>;
  message: string;
}

/** Check a list of turns; every problem is reported with its path so that all can be fixed at once. */
export function checkTurns(turns: unknown): ScriptProblem[] {
  if (!Array.isArray(turns)) return [{ path: [], message: `expected a list of turns, got ${describeValue(turns)}` }];
  const problems: ScriptProblem[] = [];
  turns.forEach((turn: unknown, index) => problems.push(...checkTurn(turn, [index])));
  return problems;
}

function checkTurn(turn: unknown, path: Array<string | number>): ScriptProblem[] {
  if (typeof turn === "string") return [];
  if (!isPlainObject(turn)) return [{ path, message: `a turn must be a string or an object with text / tool_calls / usage, got ${describeValue(turn)}` }];
  const problems: ScriptProblem[] = [];
  for (const key of Object.keys(turn)) {
    if (!TURN_KEYS.includes(key)) problems.push({ path: [...path, key], message: `unknown key \`${key}\`; a turn has ${TURN_KEYS.join(", ")}` });
  }
  if (turn["text"] !== undefined && typeof turn["text"] !== "string") problems.push({ path: [...path, "text"], message: `text must be a string, got ${describeValue(turn["text"])}` });
  const calls = turn["tool_calls"];
  if (calls !== undefined) {
    if (!Array.isArray(calls)) problems.push({ path: [...path, "tool_calls"], message: `tool_calls must be a list, got ${describeValue(calls)}` });
    else calls.forEach((call: unknown, index) => problems.push(...checkToolCall(call, [...path, "tool_calls", index])));
  }
  const usage = turn["usage"];
  if (usage !== undefined) {
    if (!isPlainObject(usage) || typeof usage["prompt_tokens"] !== "number" || typeof usage["completion_tokens"] !== "number") {
      problems.push({ path: [...path, "usage"], message: "usage must be {prompt_tokens: <number>, completion_tokens: <number>}" });
    } else {
      for (const key of OPTIONAL_USAGE) if (usage[key] !== undefined && typeof usage[key] !== "number") problems.push({ path: [...path, "usage", key], message: `${key} must be a number` });
      if (usage["batch"] !== undefined && typeof usage["batch"] !== "boolean") problems.push({ path: [...path, "usage", "batch"], message: "batch must be true or false" });
    }
  }
  if (turn["model"] !== undefined && typeof turn["model"] !== "string") problems.push({ path: [...path, "model"], message: "model must be a model name" });
  if (turn["finish_reason"] !== undefined && !FINISH_REASONS.includes(turn["finish_reason"] as FinishReason)) {
    problems.push({ path: [...path, "finish_reason"], message: `finish_reason must be one of ${FINISH_REASONS.join(", ")}, got ${describeValue(turn["finish_reason"])}` });
  }
  for (const key of ["request", "added"]) {
    const messages = turn[key];
    if (messages === undefined) continue;
    if (!Array.isArray(messages)) problems.push({ path: [...path, key], message: `${key} must be a list of messages, got ${describeValue(messages)}` });
    else messages.forEach((message: unknown, index) => problems.push(...checkMessage(message, [...path, key, index])));
  }
  if (turn["request"] !== undefined && turn["added"] !== undefined) problems.push({ path: [...path, "added"], message: "a turn has either `request` (a new dialog) or `added` (what continues the turn above), not both" });
  const offered = turn["offered"];
  if (offered !== undefined && (!Array.isArray(offered) || offered.some((name) => typeof name !== "string"))) {
    problems.push({ path: [...path, "offered"], message: "offered must be a list of tool names" });
  }
  return problems;
}

function checkMessage(message: unknown, path: Array<string | number>): ScriptProblem[] {
  if (!isPlainObject(message)) return [{ path, message: `a message must be an object with role and content, got ${describeValue(message)}` }];
  const problems: ScriptProblem[] = [];
  for (const key of Object.keys(message)) {
    if (!MESSAGE_KEYS.includes(key)) problems.push({ path: [...path, key], message: `unknown key \`${key}\`; a message has ${MESSAGE_KEYS.join(", ")}` });
  }
  if (!ROLES.includes(message["role"] as string)) problems.push({ path: [...path, "role"], message: `role must be one of ${ROLES.join(", ")}, got ${describeValue(message["role"])}` });
  if (message["content"] !== null && typeof message["content"] !== "string") problems.push({ path: [...path, "content"], message: `content must be a string or null, got ${describeValue(message["content"])}` });
  const calls = message["tool_calls"];
  if (calls !== undefined) {
    if (!Array.isArray(calls)) problems.push({ path: [...path, "tool_calls"], message: "tool_calls must be a list" });
    else {
      calls.forEach((call: unknown, index) => {
        if (!isPlainObject(call) || typeof call["id"] !== "string" || typeof call["name"] !== "string" || (typeof call["arguments"] !== "string" && !isPlainObject(call["arguments"]))) {
          problems.push({ path: [...path, "tool_calls", index], message: "a tool call of a message is {id, name, arguments}" });
        }
      });
    }
  }
  for (const key of ["tool_call_id", "name"]) {
    if (message[key] !== undefined && typeof message[key] !== "string") problems.push({ path: [...path, key], message: `${key} must be a string` });
  }
  return problems;
}

function checkToolCall(call: unknown, path: Array<string | number>): ScriptProblem[] {
  if (!isPlainObject(call)) return [{ path, message: `a tool call must be an object with name and arguments, got ${describeValue(call)}` }];
  const problems: ScriptProblem[] = [];
  for (const key of Object.keys(call)) {
    if (!TOOL_CALL_KEYS.includes(key)) problems.push({ path: [...path, key], message: `unknown key \`${key}\`; a tool call has ${TOOL_CALL_KEYS.join(", ")}` });
  }
  if (typeof call["name"] !== "string" || call["name"] === "") problems.push({ path: [...path, "name"], message: "a tool call needs a name (a non-empty string)" });
  const args = call["arguments"];
  if (args !== undefined && typeof args !== "string" && !isPlainObject(args)) {
    problems.push({ path: [...path, "arguments"], message: `arguments must be an object or a JSON string, got ${describeValue(args)}` });
  }
  if (call["id"] !== undefined && typeof call["id"] !== "string") problems.push({ path: [...path, "id"], message: "id must be a string" });
  if (call["result"] !== undefined && typeof call["result"] !== "string") problems.push({ path: [...path, "result"], message: "result must be a string (the text the tool returned when the turn was recorded)" });
  return problems;
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)}`;
}

/** `[2].tool_calls[0].name`, the way a path is shown in messages. */
export function formatScriptPath(path: Array<string | number>): string {
  return path.map((part) => (typeof part === "number" ? `[${part}]` : `.${part}`)).join("").replace(/^\./, "");
}

/** Problems as `ConfigProblem`s, without a file (programmatic scripts). */
export function toConfigProblems(problems: ScriptProblem[], prefix: string): ConfigProblem[] {
  return problems.map((problem) => ({ message: `${prefix}${problem.path.length > 0 ? `${formatScriptPath(problem.path)}: ` : ""}${problem.message}` }));
}
