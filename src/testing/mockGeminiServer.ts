import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenOnLoopback } from "./listenOnLoopback.js";
import { setImmediate as nextTick } from "node:timers/promises";
import { resolveTurn, splitIntoChunks } from "../providers/ScriptedTurn.js";
import type { ResolvedTurn, ScriptedTurn } from "../providers/ScriptedTurn.js";
import { MockScript } from "./MockScript.js";
import type { MockRequestBody, RecordedRequest } from "./RecordedRequest.js";
import { readMockRequest } from "./readMockRequest.js";

/** A failure served instead of an answer, in Google's error shape; `retryDelaySeconds` adds a RetryInfo detail. */
export interface GeminiFailure {
  status: number;
  message?: string;
  retryDelaySeconds?: number;
}

export interface MockGeminiServerOptions {
  /** Turns answered in order, one per model call (the same script format as the OpenAI mock). */
  script?: readonly ScriptedTurn[];
  failures?: GeminiFailure[];
}

export interface MockGeminiServer {
  /** The base URL (no version), as `GEMINI_BASE_URL` takes it. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

const STATUS_NAMES: Record<number, string> = { 400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE" };
const SCHEMA_TYPES = new Set(["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"]);
const SCHEMA_KEYS = new Set(["type", "format", "description", "title", "nullable", "enum", "properties", "required", "items", "anyOf", "minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties", "pattern", "default", "example", "propertyOrdering"]);

/**
 * A server of Gemini's REST API on 127.0.0.1: `POST /v1beta/models/<model>:generateContent` and
 * `:streamGenerateContent?alt=sse`, answered from a script, with Google's error bodies for injected failures. It
 * checks what the real API insists on: the `x-goog-api-key` header, `contents` with `user`/`model` roles and
 * known part kinds, a `functionResponse` for every `functionCall` in the next turn, and function declarations
 * whose schemas use only the keywords Gemini's Schema has.
 */
export async function startMockGeminiServer(options: MockGeminiServerOptions = {}): Promise<MockGeminiServer> {
  const script = new MockScript<GeminiFailure>(options);
  const requests: RecordedRequest[] = [];

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { url, record, isJson } = await readMockRequest(request, requests);
    if (!isJson) return sendError(response, 400, "Invalid JSON payload received.");
    const { body } = record;
    const route = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname);
    if (request.method !== "POST" || !route) return sendError(response, 404, `mock Gemini server: no route ${request.method} ${url.pathname}`);
    const failure = script.nextFailure();
    if (failure) return sendError(response, failure.status, failure.message ?? `mock failure ${failure.status}`, failure.retryDelaySeconds);
    if (typeof request.headers["x-goog-api-key"] !== "string") return sendError(response, 403, "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
    const invalid = checkBody(body);
    if (invalid) return sendError(response, 400, invalid);
    const turn = script.nextTurn();
    if (turn === undefined) return sendError(response, 500, `mock Gemini server: no scripted turn left for model call #${script.answered + 1}`);
    const resolved = resolveTurn(turn, script.countAnswer(), JSON.stringify(body["contents"] ?? ""));
    const model = decodeURIComponent(route[1]!);
    if (route[2] === "streamGenerateContent") {
      if (url.searchParams.get("alt") !== "sse") return sendError(response, 400, "mock Gemini server: only alt=sse streaming is served");
      return sendStream(response, resolved, model);
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(answer(resolved, model, partsOf(resolved), finishReasonOf(resolved), true)));
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => sendError(response, 500, `mock Gemini server failed: ${String(error)}`));
  });
  const listener = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${listener.port}`, requests, close: listener.close };
}

function checkBody(body: MockRequestBody): string | undefined {
  const contents = body["contents"];
  if (!Array.isArray(contents) || contents.length === 0) return "* GenerateContentRequest.contents: contents is not specified";
  let pendingCalls = 0;
  for (const [index, raw] of contents.entries()) {
    const content = raw as { role?: unknown; parts?: unknown };
    if (content.role !== "user" && content.role !== "model") return `* GenerateContentRequest.contents[${index}].role: must be "user" or "model"`;
    if (!Array.isArray(content.parts) || content.parts.length === 0) return `* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty`;
    const parts = content.parts as Array<Record<string, unknown>>;
    for (const part of parts) if (!["text", "functionCall", "functionResponse", "thoughtSignature", "thought"].some((key) => key in part)) return `* GenerateContentRequest.contents[${index}].parts: unknown part ${JSON.stringify(part)}`;
    const responses = parts.filter((part) => "functionResponse" in part).length;
    if (pendingCalls > 0 && responses !== pendingCalls) return `Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn (${pendingCalls} calls, ${responses} responses).`;
    pendingCalls = content.role === "model" ? parts.filter((part) => "functionCall" in part).length : 0;
  }
  const tools = body["tools"];
  // As the real API (Gemini 2.x) answers: no JSON response mode together with function calling.
  const json = (body["generationConfig"] as { responseMimeType?: unknown } | undefined)?.responseMimeType === "application/json";
  if (json && Array.isArray(tools) && (tools as Array<{ functionDeclarations?: unknown[] }>).some((tool) => (tool.functionDeclarations ?? []).length > 0)) {
    return "Function calling with a response mime type: 'application/json' is unsupported";
  }
  if (tools !== undefined) {
    for (const tool of tools as Array<{ functionDeclarations?: Array<{ name: string; parameters?: unknown }> }>) {
      for (const declaration of tool.functionDeclarations ?? []) {
        const problem = declaration.parameters === undefined ? undefined : checkSchema(declaration.parameters, `tools.function_declarations[${declaration.name}].parameters`);
        if (problem) return problem;
      }
    }
  }
  return undefined;
}

function checkSchema(schema: unknown, where: string): string | undefined {
  if (typeof schema !== "object" || schema === null) return `* ${where}: not a schema`;
  const node = schema as Record<string, unknown>;
  for (const key of Object.keys(node)) if (!SCHEMA_KEYS.has(key)) return `Invalid JSON payload received. Unknown name "${key}" at '${where}': Cannot find field.`;
  if (node["type"] !== undefined && !SCHEMA_TYPES.has(String(node["type"]))) return `Invalid value at '${where}.type', "${String(node["type"])}"`;
  for (const [name, child] of Object.entries((node["properties"] ?? {}) as Record<string, unknown>)) {
    const problem = checkSchema(child, `${where}.properties[${name}]`);
    if (problem) return problem;
  }
  if (node["items"] !== undefined) return checkSchema(node["items"], `${where}.items`);
  for (const [index, option] of ((node["anyOf"] ?? []) as unknown[]).entries()) {
    const problem = checkSchema(option, `${where}.any_of[${index}]`);
    if (problem) return problem;
  }
  return undefined;
}

function partsOf(turn: ResolvedTurn): Array<Record<string, unknown>> {
  const parts: Array<Record<string, unknown>> = [];
  if (turn.text) parts.push({ text: turn.text });
  for (const call of turn.toolCalls) parts.push({ functionCall: { name: call.name, args: JSON.parse(call.arguments) as unknown } });
  return parts;
}

/** Gemini's own words for a scripted turn's `finish_reason` (`length`, `content_filter`). */
function finishReasonOf(turn: ResolvedTurn): string {
  return turn.finishReason === "length" ? "MAX_TOKENS" : turn.finishReason === "content_filter" ? "SAFETY" : "STOP";
}

function answer(turn: ResolvedTurn, model: string, parts: Array<Record<string, unknown>>, finishReason: string | undefined, withUsage: boolean): Record<string, unknown> {
  return {
    candidates: [{ content: { role: "model", parts }, ...(finishReason ? { finishReason } : {}), index: 0 }],
    ...(withUsage ? { usageMetadata: { promptTokenCount: turn.usage.promptTokens, candidatesTokenCount: turn.usage.completionTokens, totalTokenCount: turn.usage.promptTokens + turn.usage.completionTokens } } : {}),
    modelVersion: model,
  };
}

async function sendStream(response: ServerResponse, turn: ResolvedTurn, model: string): Promise<void> {
  response.writeHead(200, { "content-type": "text/event-stream" });
  const chunks = splitIntoChunks(turn.text ?? "").map((piece) => answer(turn, model, [{ text: piece }], undefined, false));
  const calls = partsOf(turn).filter((part) => "functionCall" in part);
  // Function calls come whole, in the last chunk, with the finish reason and the usage.
  chunks.push(answer(turn, model, calls.length > 0 ? calls : [{ text: "" }], finishReasonOf(turn), true));
  for (const chunk of chunks) {
    if (response.destroyed) return;
    response.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    await nextTick();
  }
  response.end();
}

function sendError(response: ServerResponse, status: number, message: string, retryDelaySeconds?: number): void {
  if (response.headersSent || response.destroyed) return;
  const details = retryDelaySeconds === undefined ? [] : [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${retryDelaySeconds}s` }];
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify({ error: { code: status, message, status: STATUS_NAMES[status] ?? "UNKNOWN", ...(details.length > 0 ? { details } : {}) } }));
}
