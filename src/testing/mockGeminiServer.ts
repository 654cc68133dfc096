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
  /**
   * Function call parts carry a `thoughtSignature` (`sig-<call number>-<index>`, base64), as Gemini 3 sends them. A
   * request whose current turn has a step of function calls without its signature, or that sends back a signature
   * this server did not give, is refused (400), as Gemini 3 does.
   */
  thoughtSignatures?: boolean;
  /** Function calls carry an `id` (`fc-<call number>-<index>`); the function responses that answer them must name it. */
  functionCallIds?: boolean;
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
  /** The thought signatures given out: only these may come back. */
  const signatures = new Set<string>();

  /** A model call's body checked and answered as the live API would (a live call and a batch request alike). */
  function modelCall(body: MockRequestBody): { failure: { status: number; message: string } } | { turn: ResolvedTurn; parts: Array<Record<string, unknown>> } {
    const invalid = checkBody(body) ?? checkCallParts(body, signatures, options);
    if (invalid) return { failure: { status: 400, message: invalid } };
    const turn = options.handler ? options.handler(body) : script.nextTurn();
    if (turn === undefined) return { failure: { status: 500, message: `mock Gemini server: no scripted turn left for model call #${script.answered + 1}` } };
    const callNumber = script.countAnswer();
    const resolved = resolveTurn(turn, callNumber, JSON.stringify(body["contents"] ?? ""));
    const parts = partsOf(resolved, callNumber, options);
    for (const part of parts) if (typeof part["thoughtSignature"] === "string") signatures.add(part["thoughtSignature"]);
    return { turn: resolved, parts };
  }

  const batches = new MockBatchJobs("mock", options.batch ?? {}, async (body) => {
    const call = modelCall(body);
    if ("failure" in call) return { error: { code: call.failure.status, message: call.failure.message, status: STATUS_NAMES[call.failure.status] ?? "UNKNOWN" } };
    return { response: answer(call.turn, String(body["model"] ?? "gemini"), call.parts, finishReasonOf(call.turn), true) };
  });
  /** The model each batch was submitted for. */
  const batchModels = new Map<string, string>();

  async function handleBatches(request: IncomingMessage, response: ServerResponse, pathname: string, body: MockRequestBody): Promise<boolean> {
    if (!hasKey(request)) return sendError(response, 403, NO_KEY), true;
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
    const failure = request.method === "GET" ? batches.nextPollFailure() : undefined;
    if (failure !== undefined) return sendError(response, failure, `mock failure ${failure}`), true;
    const job = route[2] ? batches.cancel(route[1]!) : await batches.current(route[1]!);
    if (!job) return sendError(response, 404, `Batch batches/${route[1]} not found.`), true;
    if (route[2]) return sendJsonBody(response, {}), true;
    return sendOperation(response, operation(job, batchModels.get(job.id) ?? "gemini"), batches.served.bind(batches), job), true;
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
    if (!hasKey(request)) return sendError(response, 403, NO_KEY);
    const call = modelCall(body);
    if ("failure" in call) return sendError(response, call.failure.status, call.failure.message);
    const model = decodeURIComponent(route[1]!);
    if (route[2] === "streamGenerateContent") {
      if (url.searchParams.get("alt") !== "sse") return sendError(response, 400, "mock Gemini server: only alt=sse streaming is served");
      return sendStream(response, call.turn, call.parts, model);
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(answer(call.turn, model, call.parts, finishReasonOf(call.turn), true)));
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => sendError(response, 500, `mock Gemini server failed: ${String(error)}`));
  });
  const listener = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${listener.port}`, requests, batches, close: listener.close };
}

const NO_KEY = "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";

/** Every route of the API, batches included, wants the key. */
function hasKey(request: IncomingMessage): boolean {
  return typeof request.headers["x-goog-api-key"] === "string";
}

/**
 * What the call parts sent back must keep, when this server gives them (`thoughtSignatures`, `functionCallIds`):
 * Gemini 3 refuses a current turn (since the last user text) whose steps of function calls lack the signature on
 * their first call, and any signature it did not give; a function response must name the id of its call.
 */
function checkCallParts(body: MockRequestBody, signatures: Set<string>, options: MockGeminiServerOptions): string | undefined {
  const contents = body["contents"] as Array<{ role: string; parts: Array<Record<string, unknown>> }>;
  let turnStart = 0;
  contents.forEach((content, index) => {
    if (content.role === "user" && content.parts.some((part) => "text" in part) && !content.parts.some((part) => "functionResponse" in part)) turnStart = index;
  });
  let callIds: unknown[] = [];
  for (const [index, content] of contents.entries()) {
    for (const part of content.parts) if (part["thoughtSignature"] !== undefined && !signatures.has(String(part["thoughtSignature"]))) return `* GenerateContentRequest.contents[${index}]: Corrupted thought signature.`;
    const calls = content.parts.filter((part) => "functionCall" in part);
    if (options.thoughtSignatures && index > turnStart && calls.length > 0 && calls[0]!["thoughtSignature"] === undefined) {
      const name = String((calls[0]!["functionCall"] as { name?: unknown }).name);
      return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${index + 1}.`;
    }
    if (options.functionCallIds && content.role === "user" && callIds.length > 0) {
      const answered = content.parts.filter((part) => "functionResponse" in part).map((part) => (part["functionResponse"] as { id?: unknown }).id);
      if (JSON.stringify(answered) !== JSON.stringify(callIds)) return `* GenerateContentRequest.contents[${index}].parts: the function responses name ids ${JSON.stringify(answered)}, the calls had ${JSON.stringify(callIds)}`;
    }
    callIds = content.role === "model" ? calls.map((part) => (part["functionCall"] as { id?: unknown }).id) : [];
  }
  return undefined;
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
    for (const part of parts) {
      if (!["text", "functionCall", "functionResponse", "thoughtSignature", "thought", "inlineData"].some((key) => key in part)) return `* GenerateContentRequest.contents[${index}].parts: unknown part ${JSON.stringify(part).slice(0, 200)}`;
      const inline = part["inlineData"] as { mimeType?: unknown; data?: unknown } | undefined;
      if ("inlineData" in part && (typeof inline?.mimeType !== "string" || typeof inline.data !== "string")) return `* GenerateContentRequest.contents[${index}].parts: inlineData needs mimeType and data`;
    }
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

function partsOf(turn: ResolvedTurn, callNumber: number, options: MockGeminiServerOptions): Array<Record<string, unknown>> {
  const parts: Array<Record<string, unknown>> = [];
  if (turn.text) parts.push({ text: turn.text });
  turn.toolCalls.forEach((call, index) => {
    const functionCall = { ...(options.functionCallIds ? { id: `fc-${callNumber}-${index}` } : {}), name: call.name, args: JSON.parse(call.arguments) as unknown };
    parts.push({ functionCall, ...(options.thoughtSignatures ? { thoughtSignature: Buffer.from(`sig-${callNumber}-${index}`).toString("base64") } : {}) });
  });
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

async function sendStream(response: ServerResponse, turn: ResolvedTurn, parts: Array<Record<string, unknown>>, model: string): Promise<void> {
  response.writeHead(200, { "content-type": "text/event-stream" });
  const chunks = splitIntoChunks(turn.text ?? "").map((piece) => answer(turn, model, [{ text: piece }], undefined, false));
  const calls = parts.filter((part) => "functionCall" in part);
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

/** An operation, its inline responses as `served` gives them (spliced in as text: a test may serve what is not JSON). */
function sendOperation(response: ServerResponse, body: Record<string, unknown>, served: MockBatchJobs["served"], job: MockBatchJob): void {
  const list = (body["response"] as { inlinedResponses?: { inlinedResponses?: unknown[] } } | undefined)?.inlinedResponses;
  if (!list?.inlinedResponses) return sendJsonBody(response, body);
  const lines = served(list.inlinedResponses.map((entry) => JSON.stringify(entry)), job);
  const marker = `inline responses of ${job.id}`;
  list.inlinedResponses = marker as unknown as unknown[];
  response.writeHead(200, { "content-type": "application/json" });
  response.end(JSON.stringify(body).replace(JSON.stringify(marker), `[${lines.join(",")}]`));
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
