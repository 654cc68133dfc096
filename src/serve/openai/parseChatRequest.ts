import type { Message } from "../../agent/index.js";
import type { ResponseFormat } from "../../providers/Model.js";
import { isPlainObject } from "../../util/isPlainObject.js";
import type { ClientToolSpec } from "../ClientTool.js";
import { endingWith, type Conversation } from "../Conversation.js";
import { readContent, takesImages } from "../contentParts.js";
import { checkFields, required, type FieldKind } from "../fields.js";
import { badRequest, HttpError } from "../HttpError.js";
import type { ServedModel, ServedModels } from "../ServedModels.js";
import type { ClientToolChoice } from "../ServedRun.js";
import { checkModelArgs, modelArgsOf, toolChoiceOf } from "../requestOptions.js";

/** The fields of a chat completions request lllm reads, and those it takes and ignores (documented). */
const FIELDS: Record<string, readonly FieldKind[]> = {
  model: ["string"],
  messages: ["array"],
  stream: ["boolean", "null"],
  stream_options: ["object", "null"],
  response_format: ["object"],
  tools: ["array"],
  tool_choice: ["string", "object"],
  parallel_tool_calls: ["boolean"],
  max_completion_tokens: ["integer", "null"],
  max_tokens: ["integer", "null"],
  temperature: ["number", "null"],
  top_p: ["number", "null"],
  seed: ["integer", "null"],
  stop: ["string", "array", "null"],
  user: ["string"],
  metadata: ["object", "null"],
  n: ["integer", "null"],
  // Taken and ignored: they do not apply to a tactic's run, and clients send them by default.
  frequency_penalty: ["number", "null"],
  presence_penalty: ["number", "null"],
  logprobs: ["boolean", "null"],
  top_logprobs: ["integer", "null"],
  store: ["boolean", "null"],
  reasoning_effort: ["string", "null"],
  service_tier: ["string", "null"],
  verbosity: ["string", "null"],
  prompt_cache_key: ["string"],
  safety_identifier: ["string"],
};

/** A chat completions request, read. */
export interface ChatRequest {
  model: ServedModel;
  conversation: Conversation;
  stream: boolean;
  includeUsage: boolean;
  clientTools?: ClientToolSpec[];
  toolChoice?: ClientToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  modelArgs?: Record<string, unknown>;
  metadata?: Record<string, string>;
  user?: string;
}

/**
 * Read a `POST /v1/chat/completions` body: every field checked (an unknown or wrongly typed one is a 400 naming
 * it), the model found (404), the messages turned into a conversation: the client's system and developer messages,
 * the earlier turns, and the last user message as the input (or the tool results that end it).
 */
export function parseChatRequest(value: unknown, models: ServedModels): ChatRequest {
  const body = checkFields(value, FIELDS, "");
  required(body, "model", "");
  required(body, "messages", "");
  const model = findModel(models, body.model as string);
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw badRequest("`n` must be 1: a tactic gives one answer per request", "n", "unsupported_value");
  const streamOptions = body.stream_options === undefined || body.stream_options === null ? undefined : checkFields(body.stream_options, { include_usage: ["boolean"], include_obfuscation: ["boolean"] }, "stream_options");
  const clientTools = body.tools === undefined ? undefined : (body.tools as unknown[]).map((tool, index) => chatTool(tool, `tools[${index}]`));
  const metadata = body.metadata === undefined || body.metadata === null ? undefined : stringMap(body.metadata as Record<string, unknown>, "metadata");
  const conversation = chatConversation(body.messages as unknown[], model);
  checkPattern(model, conversation, clientTools);
  const toolChoice = body.tool_choice === undefined ? undefined : toolChoiceOf(body.tool_choice, "tool_choice", clientTools ?? [], (choice) => (isPlainObject(choice) && isPlainObject(choice.function) && typeof choice.function.name === "string" ? choice.function.name : undefined));
  checkModelArgs({ maxTokens: body.max_completion_tokens ?? body.max_tokens, maxTokensParam: body.max_completion_tokens !== undefined && body.max_completion_tokens !== null ? "max_completion_tokens" : "max_tokens", stop: body.stop });
  const modelArgs = modelArgsOf({ maxTokens: body.max_completion_tokens ?? body.max_tokens, temperature: body.temperature, topP: body.top_p, seed: body.seed, stop: body.stop });
  const responseFormat = body.response_format === undefined ? undefined : chatResponseFormat(body.response_format);
  return {
    model,
    conversation,
    stream: body.stream === true,
    includeUsage: streamOptions?.include_usage === true,
    ...(clientTools && clientTools.length > 0 ? { clientTools } : {}),
    ...(toolChoice ? { toolChoice } : {}),
    ...(typeof body.parallel_tool_calls === "boolean" ? { parallelToolCalls: body.parallel_tool_calls } : {}),
    ...(responseFormat ? { responseFormat } : {}),
    ...(modelArgs ? { modelArgs } : {}),
    ...(metadata ? { metadata } : {}),
    ...(typeof body.user === "string" ? { user: body.user } : {}),
  };
}

/** The served model named `id`: a 404 listing the served ones otherwise. */
export function findModel(models: ServedModels, id: string): ServedModel {
  const model = models.get(id);
  if (!model) throw new HttpError(404, `the model \`${id}\` does not exist; this server serves: ${models.ids.map((name) => `\`${name}\``).join(", ")}`, { code: "model_not_found", param: "model", type: "invalid_request_error" });
  return model;
}

/** Earlier turns and client tools need the agent pattern: the other patterns take one input. */
export function checkPattern(model: ServedModel, conversation: Conversation, clientTools: ClientToolSpec[] | undefined): void {
  const pattern = model.prepared.tactic.config.tactic_type ?? "agent";
  if (pattern === "agent") {
    // A client's tool named as one of the agent's own would be called instead of it: the client renames its tool.
    const entry = model.prepared.tactic.config.agent ?? model.prepared.agents[0]?.name;
    const own = new Set(model.prepared.agents.find((agent) => agent.name === entry)?.tools.map((bound) => bound.tool.name) ?? []);
    const clash = (clientTools ?? []).findIndex((tool) => own.has(tool.name));
    if (clash >= 0) throw badRequest(`the tool \`${clientTools![clash]!.name}\` is one of model \`${model.id}\`'s own tools: give yours another name`, `tools[${clash}]`, "tool_name_clash");
    return;
  }
  if (conversation.turns.length > 0 || conversation.system.length > 0) throw badRequest(`model \`${model.id}\` is a ${pattern} tactic: it answers one user message, without earlier turns or system messages`, conversation.param, "unsupported_conversation");
  if (conversation.inputMedia && !takesImages(model)) throw badRequest(`model \`${model.id}\` is a ${pattern} tactic: it takes text only (images go to agent tactics, whose agent's model sees them)`, conversation.param, "unsupported_content");
  if (clientTools && clientTools.length > 0) throw badRequest(`model \`${model.id}\` is a ${pattern} tactic: it takes no client tools (only agent tactics do)`, "tools", "unsupported_tools");
}

/** `{type: "function", function: {name, description, parameters, strict}}`. */
function chatTool(value: unknown, where: string): ClientToolSpec {
  const tool = checkFields(value, { type: ["string"], function: ["object"] }, where);
  if (tool.type !== "function") throw badRequest(`\`${where}.type\` must be "function" (got ${JSON.stringify(tool.type)}): only function tools are taken`, `${where}.type`, "unsupported_tool");
  required(tool, "function", where);
  return functionSpec(tool.function, `${where}.function`);
}

/** A function's declaration (chat's `function` object; the Responses API's tool itself). */
export function functionSpec(value: unknown, where: string, extra: Record<string, readonly FieldKind[]> = {}): ClientToolSpec {
  const fn = checkFields(value, { name: ["string"], description: ["string", "null"], parameters: ["object", "null"], strict: ["boolean", "null"], ...extra }, where);
  required(fn, "name", where);
  const name = fn.name as string;
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) throw badRequest(`\`${where}.name\` must be 1 to 64 letters, digits, \`_\` or \`-\` (got ${JSON.stringify(name)})`, `${where}.name`, "invalid_value");
  return {
    name,
    ...(typeof fn.description === "string" ? { description: fn.description } : {}),
    ...(isPlainObject(fn.parameters) ? { parameters: fn.parameters } : {}),
    ...(typeof fn.strict === "boolean" ? { strict: fn.strict } : {}),
  };
}

/** `text`, `json_object`, or `json_schema` with `{name, schema, strict}`. */
function chatResponseFormat(value: unknown): ResponseFormat | undefined {
  const format = checkFields(value, { type: ["string"], json_schema: ["object"] }, "response_format");
  if (format.type === "text") return undefined;
  if (format.type === "json_object") return { type: "json_object" };
  if (format.type !== "json_schema") throw badRequest(`\`response_format.type\` must be "text", "json_object" or "json_schema" (got ${JSON.stringify(format.type)})`, "response_format.type", "invalid_value");
  required(format, "json_schema", "response_format");
  const schema = checkFields(format.json_schema, { name: ["string"], description: ["string"], schema: ["object"], strict: ["boolean", "null"] }, "response_format.json_schema");
  required(schema, "name", "response_format.json_schema");
  return { type: "json_schema", name: schema.name as string, schema: (schema.schema as Record<string, unknown> | undefined) ?? { type: "object" }, ...(typeof schema.strict === "boolean" ? { strict: schema.strict } : {}) };
}

/** `metadata`: string values only, as OpenAI's. */
export function stringMap(value: Record<string, unknown>, where: string): Record<string, string> {
  for (const [key, entry] of Object.entries(value)) if (typeof entry !== "string") throw badRequest(`\`${where}.${key}\` must be a string`, `${where}.${key}`, "invalid_type");
  return value as Record<string, string>;
}

/**
 * The messages as a conversation. System and developer messages anywhere are the client's system texts; user,
 * assistant (with tool calls) and tool messages are turns; the last user message is the input, or, when tool
 * messages end the list, those are the results a paused run waits for.
 */
function chatConversation(messages: unknown[], model: ServedModel): Conversation {
  if (messages.length === 0) throw badRequest("`messages` is empty: send at least one user message", "messages", "no_user_message");
  const agent = model.prepared.tactic.config.agent ?? model.prepared.agents[0]?.name ?? "assistant";
  const system: string[] = [];
  const turns: Message[] = [];
  const toolNames = new Map<string, string>();
  messages.forEach((value, index) => {
    const where = `messages[${index}]`;
    if (!isPlainObject(value)) throw badRequest(`\`${where}\` must be an object`, where, "invalid_type");
    const role = value.role;
    if (role === "system" || role === "developer") {
      const message = checkFields(value, { role: ["string"], content: ["string", "array"], name: ["string"] }, where);
      required(message, "content", where);
      system.push(readContent(message.content, `${where}.content`, false).text);
    } else if (role === "user") {
      const message = checkFields(value, { role: ["string"], content: ["string", "array"], name: ["string"] }, where);
      required(message, "content", where);
      const { text, media } = readContent(message.content, `${where}.content`, true);
      turns.push({ role: "user", content: text, name: "user", ...(media.length > 0 ? { media } : {}) });
    } else if (role === "assistant") {
      const message = checkFields(value, { role: ["string"], content: ["string", "array", "null"], name: ["string"], tool_calls: ["array"], refusal: ["string", "null"], audio: ["object", "null"], function_call: ["object", "null"] }, where);
      const content = message.content === undefined || message.content === null ? "" : readContent(message.content, `${where}.content`, false).text;
      const calls = (message.tool_calls as unknown[] | undefined ?? []).map((call, callIndex) => {
        const callWhere = `${where}.tool_calls[${callIndex}]`;
        const checked = checkFields(call, { id: ["string"], type: ["string"], function: ["object"] }, callWhere);
        required(checked, "id", callWhere);
        required(checked, "function", callWhere);
        const fn = checkFields(checked.function, { name: ["string"], arguments: ["string"] }, `${callWhere}.function`);
        required(fn, "name", `${callWhere}.function`);
        toolNames.set(checked.id as string, fn.name as string);
        return { id: checked.id as string, name: fn.name as string, arguments: typeof fn.arguments === "string" ? fn.arguments : "{}" };
      });
      turns.push(calls.length > 0 ? { role: "tool_call", content, name: agent, toolCalls: calls } : { role: "assistant", content, name: agent });
    } else if (role === "tool") {
      const message = checkFields(value, { role: ["string"], content: ["string", "array"], tool_call_id: ["string"] }, where);
      required(message, "tool_call_id", where);
      required(message, "content", where);
      const id = message.tool_call_id as string;
      turns.push({ role: "tool", content: readContent(message.content, `${where}.content`, false).text, name: toolNames.get(id) ?? "tool", toolCallId: id });
    } else {
      throw badRequest(`\`${where}.role\` must be "system", "developer", "user", "assistant" or "tool" (got ${JSON.stringify(role)})`, `${where}.role`, "invalid_value");
    }
  });
  if (!turns.some((turn) => turn.role === "user")) throw badRequest("the messages have no user turn: send at least one message with role \"user\"", "messages", "no_user_message");
  const last = turns.at(-1)!;
  if (last.role === "user") return endingWith(last, { system, turns: turns.slice(0, -1), param: "messages" });
  if (last.role === "tool") {
    let first = turns.length - 1;
    while (first > 0 && turns[first - 1]!.role === "tool") first--;
    const toolResults = new Map(turns.slice(first).map((turn) => [turn.toolCallId ?? "", turn.content]));
    return { system, turns: turns.slice(0, first), toolResults, param: "messages" };
  }
  throw badRequest("the last message is the assistant's: end with a user message (or the results of the tool calls the assistant asked for)", `messages[${messages.length - 1}]`, "no_user_message");
}
