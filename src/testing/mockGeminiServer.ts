import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenOnLoopback } from "./listenOnLoopback.js";
import { setImmediate as nextTick } from "node:timers/promises";
import { resolveTurn, splitIntoChunks } from "../providers/ScriptedTurn.js";
import type { ResolvedTurn, ScriptedTurn } from "../providers/ScriptedTurn.js";
import { MockScript } from "./MockScript.js";
import type { MockRequestBody, RecordedRequest } from "./RecordedRequest.js";
import { readMockRequest } from "./readMockRequest.js";
import { MockBatchJobs, type MockBatchJob, type MockBatchOptions } from "./MockBatchJobs.js";

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
  /** Answer every model call from this function (the request body) instead of the script. */
  handler?: (body: MockRequestBody) => ScriptedTurn;
  /** Batch mode (`:batchGenerateContent` with inline requests, `batches/…`): when its jobs end, which requests it refuses. */
  batch?: MockBatchOptions;
}

export interface MockGeminiServer {
  /** The base URL (no version), as `GEMINI_BASE_URL` takes it. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** The batches submitted; make the next ones fail or expire, or polls fail. */
  readonly batches: MockBatchJobs;
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

  const batches = new MockBatchJobs("mock", options.batch ?? {}, async (body) => {
    const invalid = checkBody(body);
    if (invalid) return { error: { code: 400, message: invalid, status: "INVALID_ARGUMENT" } };
    const turn = options.handler ? options.handler(body) : script.nextTurn();
    if (turn === undefined) return { error: { code: 500, message: "mock Gemini server: no scripted turn left", status: "INTERNAL" } };
    const resolved = resolveTurn(turn, script.countAnswer(), JSON.stringify(body["contents"] ?? ""));
    return { response: answer(resolved, String(body["model"] ?? "gemini"), partsOf(resolved), finishReasonOf(resolved), true) };
  });
  /** The model each batch was submitted for. */
  const batchModels = new Map<string, string>();

  async function handleBatches(request: IncomingMessage, response: ServerResponse, pathname: string, body: MockRequestBody): Promise<boolean> {
    const create = /^\/v1beta\/models\/([^/:]+):batchGenerateContent$/.exec(pathname);
    if (request.method === "POST" && create) {
      const batch = body["batch"] as { displayName?: string; inputConfig?: { requests?: { requests?: Array<{ request: MockRequestBody; metadata?: { key?: string } }> } } } | undefined;
      const list = batch?.inputConfig?.requests?.requests;
      if (!Array.isArray(list) || list.length === 0) return sendError(response, 400, "* BatchGenerateContentRequest.batch.input_config: inline requests are required"), true;
      const job = batches.create(list.map((entry, index) => ({ customId: entry.metadata?.key ?? String(index), body: entry.request })), batch?.displayName);
      batchModels.set(job.id, decodeURIComponent(create[1]!));
      return sendJsonBody(response, operation(job, batchModels.get(job.id)!)), true;
    }
    if (request.method === "GET" && pathname === "/v1beta/batches") {
      return sendJsonBody(response, { operations: [...batches.jobs.values()].reverse().map((job) => operation(job, batchModels.get(job.id) ?? "gemini")) }), true;
    }
    const route = /^\/v1beta\/batches\/([^/:]+)(:cancel)?$/.exec(pathname);
    if (!route) return false;
    if (typeof request.headers["x-goog-api-key"] !== "string") return sendError(response, 403, "Method doesn't allow unregistered callers."), true;
    const failure = request.method === "GET" ? batches.nextPollFailure() : undefined;
    if (failure !== undefined) return sendError(response, failure, `mock failure ${failure}`), true;
    const job = route[2] ? batches.cancel(route[1]!) : await batches.current(route[1]!);
    if (!job) return sendError(response, 404, `Batch batches/${route[1]} not found.`), true;
    return sendJsonBody(response, route[2] ? {} : operation(job, batchModels.get(job.id) ?? "gemini")), true;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { url, record, isJson } = await readMockRequest(request, requests);
    if (!isJson) return sendError(response, 400, "Invalid JSON payload received.");
    const { body } = record;
    if ((url.pathname.includes(":batchGenerateContent") || url.pathname.startsWith("/v1beta/batches")) && (await handleBatches(request, response, url.pathname, body))) return;
    const route = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname);
    if (request.method !== "POST" || !route) return sendError(response, 404, `mock Gemini server: no route ${request.method} ${url.pathname}`);
    const failure = script.nextFailure();
    if (failure) return sendError(response, failure.status, failure.message ?? `mock failure ${failure.status}`, failure.retryDelaySeconds);
    if (typeof request.headers["x-goog-api-key"] !== "string") return sendError(response, 403, "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
    const invalid = checkBody(body);
    if (invalid) return sendError(response, 400, invalid);
    const turn = options.handler ? options.handler(body) : script.nextTurn();
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
  return { url: `http://127.0.0.1:${listener.port}`, requests, batches, close: listener.close };
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

function sendJsonBody(response: ServerResponse, body: unknown): void {
  response.writeHead(200, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

const BATCH_STATES: Record<MockBatchJob["state"], string> = { running: "BATCH_STATE_RUNNING", ended: "BATCH_STATE_SUCCEEDED", failed: "BATCH_STATE_FAILED", expired: "BATCH_STATE_EXPIRED", cancelled: "BATCH_STATE_CANCELLED" };

/** A batch as the REST API shows it: an operation whose `metadata` is the batch, with `response` once it succeeded. */
function operation(job: MockBatchJob, model: string): Record<string, unknown> {
  const results = job.results ?? [];
  const inlined = results.map((result, index) => {
    const key = { key: job.requests[index]!.customId };
    if (!result.ok) return { error: { code: result.status, message: result.message, status: "INVALID_ARGUMENT" }, metadata: key };
    const outcome = result.answer as { response?: unknown; error?: unknown };
    return outcome.error ? { error: outcome.error, metadata: key } : { response: outcome.response, metadata: key };
  });
  const failed = inlined.filter((line) => "error" in line).length;
  const metadata = {
    "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
    name: `batches/${job.id}`,
    model: `models/${model}`,
    displayName: typeof job.label === "string" ? job.label : "batch",
    state: BATCH_STATES[job.state],
    createTime: new Date(job.createdAt).toISOString(),
    batchStats: { requestCount: String(job.requests.length), successfulRequestCount: String(results.length - failed), failedRequestCount: String(failed), pendingRequestCount: String(job.state === "running" ? job.requests.length : 0) },
  };
  const done = job.state !== "running";
  return {
    name: `batches/${job.id}`,
    metadata,
    done,
    ...(job.state === "ended" ? { response: { "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput", inlinedResponses: { inlinedResponses: inlined } } } : {}),
    ...(job.state === "failed" ? { error: { code: 13, message: "the mock was told to fail this batch" } } : {}),
  };
}
