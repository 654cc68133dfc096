import type { ModelRequest, ToolSchema } from "../providers/Model.js";

/**
 * Tokens an answer may have when the request does not say (no `max_tokens` in `model_args`): the worst case a
 * cost or token limit assumes for it. Anthropic's requests always carry a limit (8192 unless `model_args` say
 * otherwise), so theirs is exact; set `max_tokens` to make it exact on the other providers too.
 */
export const ASSUMED_MAX_ANSWER_TOKENS = 4096;
/**
 * The fewest answer tokens a request is sent with under a cost or token limit: a call the rest of the budget cannot
 * give this much room (or the request's own smaller `max_tokens`) is not made, and the run stops. Less would buy
 * answers cut off mid-sentence, which are not answers.
 */
export const MIN_ANSWER_TOKENS = 256;
/** What Anthropic is sent when `model_args` set no `max_tokens` (see anthropicRequestBody). */
const ANTHROPIC_MAX_ANSWER_TOKENS = 8192;
/** The `model_args` keys that bound an answer's length, in the spellings the providers take. */
const ANSWER_LIMIT_KEYS = ["max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens"] as const;

/** Characters of JSON each message adds besides its text (role, name, separators): a little, counted anyway. */
const MESSAGE_OVERHEAD = 12;

/** The size of each tools list, by the list: the loop sends the same array on every round of a response. */
const toolsSize = new WeakMap<readonly ToolSchema[], number>();
/** The size of each response-format schema, by the schema object. */
const schemaSize = new WeakMap<object, number>();

/**
 * `promptCharacters` for the requests of one agent, which send the same dialog again with a few messages more each
 * round: the characters of the part sent last time (the same message objects: a dialog gives each message's model
 * form once) are counted once, and only the new messages are measured.
 */
export class PromptSizer {
  #messages: readonly ModelRequest["messages"][number][] = [];
  #characters = 0;

  measure(request: ModelRequest): number {
    const { messages } = request;
    const known = this.#messages.length;
    const same = known > 0 && messages.length >= known && messages[0] === this.#messages[0] && messages[known - 1] === this.#messages[known - 1];
    const characters = same ? this.#characters + messageCharacters(messages, known) : messageCharacters(messages, 0);
    this.#messages = messages;
    this.#characters = characters;
    return characters + extraCharacters(request);
  }
}

/**
 * How many characters a request's prompt has: every message's text and tool calls, the tools' JSON and the
 * output schema. Cheap (string lengths; the tools and the schema are measured once each), so that a budget can
 * estimate the prompt's tokens before every request.
 */
export function promptCharacters(request: ModelRequest): number {
  return messageCharacters(request.messages, 0) + extraCharacters(request);
}

/** The characters of `messages` from `start` on: text, tool calls, and a little for each message's JSON. */
function messageCharacters(messages: ModelRequest["messages"], start: number): number {
  let characters = (messages.length - start) * MESSAGE_OVERHEAD;
  for (let index = start; index < messages.length; index += 1) {
    const message = messages[index]!;
    if (message.content !== null) characters += message.content.length;
    if (message.role === "assistant" && message.toolCalls !== undefined) {
      for (const call of message.toolCalls) characters += call.name.length + call.arguments.length + MESSAGE_OVERHEAD;
    }
  }
  return characters;
}

/** The characters of the tools' JSON and of the output schema. */
function extraCharacters(request: ModelRequest): number {
  let characters = 0;
  if (request.tools && request.tools.length > 0) {
    let size = toolsSize.get(request.tools);
    if (size === undefined) toolsSize.set(request.tools, (size = JSON.stringify(request.tools).length));
    characters += size;
  }
  const format = request.responseFormat;
  if (format?.type === "json_schema") {
    let size = schemaSize.get(format.schema);
    if (size === undefined) schemaSize.set(format.schema, (size = JSON.stringify(format.schema).length));
    characters += size;
  }
  return characters;
}

/**
 * The most answer tokens a request may get: what its `model_args` say (`max_tokens` or a provider's spelling),
 * Anthropic's default (and its thinking budget) for `anthropic/` models, else `ASSUMED_MAX_ANSWER_TOKENS`.
 */
export function maxAnswerTokens(request: ModelRequest, model: string): number {
  const args = request.modelArgs;
  if (args) {
    for (const key of ANSWER_LIMIT_KEYS) {
      const value = args[key];
      if (typeof value === "number" && Number.isFinite(value) && value > 0) return value;
    }
  }
  if (model.startsWith("anthropic/")) {
    const thinking = args?.["thinking"];
    const budget = typeof thinking === "object" && thinking !== null ? Number((thinking as Record<string, unknown>)["budget_tokens"]) : thinking === true ? 2048 : NaN;
    return Number.isFinite(budget) ? budget + ANTHROPIC_MAX_ANSWER_TOKENS : ANTHROPIC_MAX_ANSWER_TOKENS;
  }
  return ASSUMED_MAX_ANSWER_TOKENS;
}
