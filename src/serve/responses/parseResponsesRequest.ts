import type { Message } from "../../agent/index.js";
import type { ResponseFormat } from "../../providers/Model.js";
import { isPlainObject } from "../../util/isPlainObject.js";
import type { ClientToolSpec } from "../ClientTool.js";
import { endingWith, type Conversation } from "../Conversation.js";
import { readContent } from "../contentParts.js";
import { checkFields, required, type FieldKind } from "../fields.js";
import { badRequest, HttpError } from "../HttpError.js";
import { checkPattern, findModel, functionSpec, stringMap } from "../openai/parseChatRequest.js";
import { checkModelArgs, modelArgsOf, toolChoiceOf } from "../requestOptions.js";
import type { ServedModel, ServedModels } from "../ServedModels.js";
import type { ClientToolChoice } from "../ServedRun.js";
import type { KeptResponse } from "./ServedResponses.js";

/** The fields of a Responses request lllm reads, and those it takes and ignores (documented). */
const FIELDS: Record<string, readonly FieldKind[]> = {
  model: ["string"],
  input: ["string", "array"],
  instructions: ["string", "null"],
  previous_response_id: ["string", "null"],
  store: ["boolean", "null"],
  stream: ["boolean", "null"],
  tools: ["array"],
  tool_choice: ["string", "object"],
  parallel_tool_calls: ["boolean", "null"],
  text: ["object"],
  max_output_tokens: ["integer", "null"],
  temperature: ["number", "null"],
  top_p: ["number", "null"],
  metadata: ["object", "null"],
  user: ["string"],
  // Taken and ignored: they do not apply to a tactic's run, and clients send them by default.
  include: ["array", "null"],
  truncation: ["string", "null"],
  reasoning: ["object", "null"],
  service_tier: ["string", "null"],
  prompt_cache_key: ["string"],
  prompt_cache_retention: ["string", "null"],
  safety_identifier: ["string"],
  stream_options: ["object", "null"],
  background: ["boolean", "null"],
  top_logprobs: ["integer", "null"],
};

/** A Responses request, read. */
export interface ResponsesRequest {
  model: ServedModel;
  conversation: Conversation;
  /** The new input items as turns (what this response adds to the dialog, before its own output). */
  added: Message[];
  instructions: string | null;
  previousResponseId: string | null;
  store: boolean;
  stream: boolean;
  clientTools?: ClientToolSpec[];
  toolChoice?: ClientToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  modelArgs?: Record<string, unknown>;
  metadata?: Record<string, string>;
  user?: string;
  /** The request's own fields a response echoes: tools, tool_choice, text, temperature, top_p, max_output_tokens. */
  echo: Record<string, unknown>;
}

/**
 * Read a `POST /v1/responses` body: every field checked, the model found, the input (text or items) turned into a
 * conversation after the dialog of `previous_response_id` (a kept response: 404 when there is none): its messages,
 * the function calls and their outputs; `instructions` are the client's system text.
 */
export function parseResponsesRequest(value: unknown, models: ServedModels, kept: (id: string) => KeptResponse | undefined): ResponsesRequest {
  const body = checkFields(value, FIELDS, "");
  required(body, "model", "");
  required(body, "input", "");
  const model = findModel(models, body.model as string);
  if (body.background === true) throw badRequest("`background: true` is not supported: every response is answered in its request", "background", "unsupported_value");
  const previousResponseId = typeof body.previous_response_id === "string" ? body.previous_response_id : null;
  let earlier: Message[] = [];
  if (previousResponseId !== null) {
    const previous = kept(previousResponseId);
    if (!previous) throw new HttpError(404, `no response \`${previousResponseId}\` is kept here (it was made with store: false, deleted, or by another server)`, { code: "previous_response_not_found", param: "previous_response_id", type: "invalid_request_error" });
    if (!previous.history) throw badRequest(`response \`${previousResponseId}\` is still in progress: wait for it to complete`, "previous_response_id", "previous_response_in_progress");
    earlier = previous.history;
  }
  const clientTools = body.tools === undefined ? undefined : (body.tools as unknown[]).map((tool, index) => responsesTool(tool, `tools[${index}]`));
  const added = inputTurns(body.input as string | unknown[], model);
  const instructions = typeof body.instructions === "string" ? body.instructions : null;
  const conversation = conversationOf([...earlier, ...added], instructions);
  checkPattern(model, conversation, clientTools);
  const toolChoice = body.tool_choice === undefined ? undefined : toolChoiceOf(body.tool_choice, "tool_choice", clientTools ?? [], (choice) => (isPlainObject(choice) && choice.type === "function" && typeof choice.name === "string" ? choice.name : undefined));
  checkModelArgs({ maxTokens: body.max_output_tokens, maxTokensParam: "max_output_tokens" });
  const modelArgs = modelArgsOf({ maxTokens: body.max_output_tokens, temperature: body.temperature, topP: body.top_p, seed: undefined, stop: undefined });
  const responseFormat = body.text === undefined ? undefined : textFormat(body.text);
  const metadata = body.metadata === undefined || body.metadata === null ? undefined : stringMap(body.metadata as Record<string, unknown>, "metadata");
  return {
    model,
    conversation,
    added,
    instructions,
    previousResponseId,
    store: body.store !== false,
    stream: body.stream === true,
    ...(clientTools && clientTools.length > 0 ? { clientTools } : {}),
    ...(toolChoice ? { toolChoice } : {}),
    ...(typeof body.parallel_tool_calls === "boolean" ? { parallelToolCalls: body.parallel_tool_calls } : {}),
    ...(responseFormat ? { responseFormat } : {}),
    ...(modelArgs ? { modelArgs } : {}),
    ...(metadata ? { metadata } : {}),
    ...(typeof body.user === "string" ? { user: body.user } : {}),
    echo: { tools: body.tools ?? [], tool_choice: body.tool_choice ?? "auto", text: body.text ?? { format: { type: "text" } }, temperature: body.temperature ?? null, top_p: body.top_p ?? null, max_output_tokens: body.max_output_tokens ?? null, parallel_tool_calls: body.parallel_tool_calls ?? true },
  };
}

/** `{type: "function", name, description, parameters, strict}`. */
function responsesTool(value: unknown, where: string): ClientToolSpec {
  if (!isPlainObject(value) || value.type !== "function") throw badRequest(`\`${where}.type\` must be "function" (got ${JSON.stringify(isPlainObject(value) ? value.type : value)}): only function tools are taken`, `${where}.type`, "unsupported_tool");
  return functionSpec(value, where, { type: ["string"], defer_loading: ["boolean"] });
}

/** `text.format`: `text`, `json_object`, or `json_schema` with `{name, schema, strict}`. */
function textFormat(value: unknown): ResponseFormat | undefined {
  const text = checkFields(value, { format: ["object"], verbosity: ["string", "null"] }, "text");
  if (text.format === undefined) return undefined;
  const format = checkFields(text.format, { type: ["string"], name: ["string"], schema: ["object"], description: ["string"], strict: ["boolean", "null"] }, "text.format");
  if (format.type === "text") return undefined;
  if (format.type === "json_object") return { type: "json_object" };
  if (format.type !== "json_schema") throw badRequest(`\`text.format.type\` must be "text", "json_object" or "json_schema" (got ${JSON.stringify(format.type)})`, "text.format.type", "invalid_value");
  required(format, "name", "text.format");
  return { type: "json_schema", name: format.name as string, schema: (format.schema as Record<string, unknown> | undefined) ?? { type: "object" }, ...(typeof format.strict === "boolean" ? { strict: format.strict } : {}) };
}

/**
 * The input as turns: a text is one user message; items are messages (user, assistant, and system or developer
 * ones, which become system turns), function calls and their outputs. Reasoning items are dropped (a tactic's
 * agents reason on their own).
 */
function inputTurns(input: string | unknown[], model: ServedModel): Message[] {
  if (typeof input === "string") return [{ role: "user", content: input, name: "user" }];
  const agent = model.prepared.tactic.config.agent ?? model.prepared.agents[0]?.name ?? "assistant";
  const turns: Message[] = [];
  const names = new Map<string, string>();
  input.forEach((value, index) => {
    const where = `input[${index}]`;
    if (!isPlainObject(value)) throw badRequest(`\`${where}\` must be an object`, where, "invalid_type");
    const type = value.type ?? "message";
    if (type === "message") {
      const item = checkFields(value, { type: ["string"], role: ["string"], content: ["string", "array"], id: ["string"], status: ["string"], phase: ["string", "null"] }, where);
      required(item, "content", where);
      const { text: content, media } = readContent(item.content, `${where}.content`, item.role === "user");
      if (item.role === "user") turns.push({ role: "user", content, name: "user", ...(media.length > 0 ? { media } : {}) });
      else if (item.role === "assistant") turns.push({ role: "assistant", content, name: agent });
      else if (item.role === "system" || item.role === "developer") turns.push({ role: "system", content, name: "system" });
      else throw badRequest(`\`${where}.role\` must be "user", "assistant", "system" or "developer" (got ${JSON.stringify(item.role)})`, `${where}.role`, "invalid_value");
    } else if (type === "function_call") {
      const item = checkFields(value, { type: ["string"], call_id: ["string"], name: ["string"], arguments: ["string"], id: ["string"], status: ["string"], namespace: ["string"] }, where);
      for (const key of ["call_id", "name", "arguments"]) required(item, key, where);
      names.set(item.call_id as string, item.name as string);
      const call = { id: item.call_id as string, name: item.name as string, arguments: item.arguments as string };
      // Calls of one round come as consecutive items: one turn of the model, as the dialog keeps it.
      const previous = turns.at(-1);
      if (previous?.role === "tool_call") previous.toolCalls = [...(previous.toolCalls ?? []), call];
      else turns.push({ role: "tool_call", content: "", name: agent, toolCalls: [call] });
    } else if (type === "function_call_output") {
      const item = checkFields(value, { type: ["string"], call_id: ["string"], output: ["string", "array"], id: ["string", "null"], status: ["string", "null"] }, where);
      required(item, "call_id", where);
      required(item, "output", where);
      const id = item.call_id as string;
      turns.push({ role: "tool", content: readContent(item.output, `${where}.output`, false).text, name: names.get(id) ?? "tool", toolCallId: id });
    } else if (type === "reasoning") {
      // dropped
    } else {
      throw badRequest(`\`${where}.type\` ${JSON.stringify(type)} is not taken: send messages, function_call and function_call_output items`, `${where}.type`, "unsupported_input");
    }
  });
  return turns;
}

/** The dialog as a conversation: system turns are the client's texts; it ends with a user message or tool results. */
function conversationOf(turns: Message[], instructions: string | null): Conversation {
  const system = [...(instructions !== null ? [instructions] : []), ...turns.filter((turn) => turn.role === "system").map((turn) => turn.content)];
  const dialog = turns.filter((turn) => turn.role !== "system");
  if (!dialog.some((turn) => turn.role === "user")) throw badRequest("the input has no user message", "input", "no_user_message");
  const last = dialog.at(-1)!;
  if (last.role === "user") return endingWith(last, { system, turns: dialog.slice(0, -1), param: "input" });
  if (last.role === "tool") {
    let first = dialog.length - 1;
    while (first > 0 && dialog[first - 1]!.role === "tool") first--;
    return { system, turns: dialog.slice(0, first), toolResults: new Map(dialog.slice(first).map((turn) => [turn.toolCallId ?? "", turn.content])), param: "input" };
  }
  throw badRequest("the input ends with the assistant's turn: end with a user message (or the outputs of the function calls)", "input", "no_user_message");
}
