import type { ModelMessage, ModelRequest } from "./Model.js";
import { imagesCaption, imagesForModel } from "./imagesForModel.js";
import { toGeminiSchema } from "./toGeminiSchema.js";
import { toolArgumentsObject } from "./toolArgumentsObject.js";

type Part = Record<string, unknown>;
interface Content {
  role: "user" | "model";
  parts: Part[];
}

/** `model_args` keys that are Gemini's `generationConfig` fields, under their OpenAI/LiteLLM spelling too. */
const GENERATION_CONFIG: Record<string, string> = {
  temperature: "temperature",
  top_p: "topP",
  topP: "topP",
  top_k: "topK",
  topK: "topK",
  max_tokens: "maxOutputTokens",
  max_completion_tokens: "maxOutputTokens",
  max_output_tokens: "maxOutputTokens",
  maxOutputTokens: "maxOutputTokens",
  stop: "stopSequences",
  stop_sequences: "stopSequences",
  stopSequences: "stopSequences",
  seed: "seed",
  candidate_count: "candidateCount",
  presence_penalty: "presencePenalty",
  frequency_penalty: "frequencyPenalty",
  thinking_config: "thinkingConfig",
  thinkingConfig: "thinkingConfig",
};

export interface GeminiBodyOptions {
  /** The part a tool call came in (with its `thoughtSignature`), by call id: Gemini wants it back unchanged. */
  partFor?: (toolCallId: string) => Part | undefined;
}

/**
 * The `generateContent` body of a request: system messages as `systemInstruction`, the dialog as `contents`
 * (`user` and `model` turns, tool calls as `functionCall` parts, results as `functionResponse` parts, all results of
 * a round in one turn), tools as `functionDeclarations` with their schemas converted (see `toGeminiSchema`), and a
 * response format as `responseMimeType`/`responseSchema` (or, while tools are offered, as an instruction). Known `model_args` go into `generationConfig`; others are
 * top-level fields (`safetySettings`, `cachedContent`, …).
 */
export function geminiRequestBody(request: ModelRequest, options: GeminiBodyOptions = {}): Record<string, unknown> {
  const { timeout: _timeout, model: _model, stream: _stream, ...modelArgs } = request.modelArgs ?? {};
  const body: Record<string, unknown> = {};
  const format = request.responseFormat;
  const tools = request.tools ?? [];
  const hasTools = tools.length > 0;
  // Gemini takes no response schema together with function declarations ("Function calling with a response mime
  // type: 'application/json' is unsupported"): while tools are offered, the schema goes into the instructions and
  // the loop checks the reply (sending a mismatch back to be fixed); the call without tools gets responseSchema.
  const system = [...request.messages.filter((message) => message.role === "system").map((message) => message.content), ...(format && hasTools ? [jsonInstruction(format)] : [])].join("\n\n");
  body["contents"] = toContents(request.messages, options);
  if (system !== "") body["systemInstruction"] = { parts: [{ text: system }] };
  if (hasTools) {
    body["tools"] = [{ functionDeclarations: tools.map((tool) => toDeclaration(tool.function)) }];
    if (request.toolChoice) body["toolConfig"] = { functionCallingConfig: { mode: request.toolChoice === "required" ? "ANY" : request.toolChoice.toUpperCase() } };
  }
  const generationConfig: Record<string, unknown> = {};
  if (format && !hasTools) {
    generationConfig["responseMimeType"] = "application/json";
    if (format.type === "json_schema") generationConfig["responseSchema"] = toGeminiSchema(format.schema, `output schema ${format.name}`);
  }
  for (const [key, value] of Object.entries(modelArgs)) {
    const field = GENERATION_CONFIG[key];
    if (field) generationConfig[field] = key === "stop" && typeof value === "string" ? [value] : value;
    else if (key === "generationConfig" && typeof value === "object" && value !== null) Object.assign(generationConfig, value);
    else body[key] = value;
  }
  // The budget's cut: it lowers a limit the model_args set, never raises it.
  if (request.maxAnswerTokens !== undefined) {
    const asked = generationConfig["maxOutputTokens"];
    generationConfig["maxOutputTokens"] = Math.min(typeof asked === "number" ? asked : Number.POSITIVE_INFINITY, request.maxAnswerTokens);
  }
  if (Object.keys(generationConfig).length > 0) body["generationConfig"] = generationConfig;
  return body;
}

/** What the model is told when the schema cannot be sent as `responseSchema` (tools are offered with it). */
export function jsonInstruction(format: NonNullable<ModelRequest["responseFormat"]>): string {
  return format.type === "json_schema"
    ? `When you give your final answer (rather than calling a function), reply with only a JSON value that matches this JSON Schema, and nothing else:\n${JSON.stringify(format.schema)}`
    : "When you give your final answer (rather than calling a function), reply with only a JSON object, and nothing else.";
}

/** A tool's declaration; a tool without parameters has none (Gemini refuses an empty object schema). */
function toDeclaration(tool: { name: string; description: string; parameters: Record<string, unknown> }): Record<string, unknown> {
  const properties = tool.parameters["properties"];
  const empty = !properties || (typeof properties === "object" && Object.keys(properties).length === 0);
  return { name: tool.name, description: tool.description, ...(empty ? {} : { parameters: toGeminiSchema(tool.parameters, tool.name) }) };
}

function toContents(messages: ModelMessage[], options: GeminiBodyOptions): Content[] {
  const contents: Content[] = [];
  const callNames = new Map<string, string>();
  const push = (role: "user" | "model", parts: Part[]): void => {
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  // The images of a round's results follow all its function responses, in the same user turn.
  let images: Part[] = [];
  for (const message of messages) {
    if (message.role !== "tool" && images.length > 0) {
      push("user", images);
      images = [];
    }
    if (message.role === "system") continue;
    if (message.role === "user") {
      // A user's images follow the text.
      const attached = imagesForModel(message);
      push("user", [...(message.content !== "" || attached.length === 0 ? [{ text: message.content }] : []), ...attached.map((image) => ({ inlineData: { mimeType: image.mimeType, data: image.data } }))]);
    } else if (message.role === "assistant") {
      const parts: Part[] = message.content ? [{ text: message.content }] : [];
      for (const call of message.toolCalls ?? []) {
        callNames.set(call.id, call.name);
        parts.push(options.partFor?.(call.id) ?? { functionCall: { name: call.name, args: toolArgumentsObject(call.arguments) } });
      }
      push("model", parts.length > 0 ? parts : [{ text: "" }]);
    } else {
      const name = message.name ?? callNames.get(message.toolCallId) ?? "tool";
      // A call Gemini gave an id to is answered with that id (ids lllm made up for calls without one are not sent).
      const callId = (options.partFor?.(message.toolCallId)?.["functionCall"] as { id?: unknown } | undefined)?.id;
      push("user", [{ functionResponse: { ...(typeof callId === "string" ? { id: callId } : {}), name, response: message.isError ? { error: message.content } : { result: message.content } } }]);
      const attached = imagesForModel(message);
      if (attached.length > 0) images.push({ text: imagesCaption(message, attached.length) }, ...attached.map((image) => ({ inlineData: { mimeType: image.mimeType, data: image.data } })));
    }
  }
  if (images.length > 0) push("user", images);
  return contents;
}
