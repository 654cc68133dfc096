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

/** A failure served instead of an answer: an HTTP status in Anthropic's error shape, with `retry-after` when given. */
export interface AnthropicFailure {
  status: number;
  retryAfter?: number;
  message?: string;
}

export interface MockAnthropicServerOptions {
  /** Turns answered in order, one per model call (the same script format as the OpenAI mock). */
  script?: readonly ScriptedTurn[];
  /** Failures served first, one per model call. */
  failures?: AnthropicFailure[];
  /** Cache tokens to report in every answer's usage (`cache_read_input_tokens`, `cache_creation_input_tokens`). */
  cacheUsage?: { read: number; write: number };
  /**
   * Thinking text to put before every answer's content (as extended thinking does), signed `sig-mock-<call number>`.
   * A request that sends back a thinking block with a signature this server did not give is refused (400), and so
   * is one with thinking on whose last assistant turn has tool calls but no thinking block first, as the API does.
   */
  thinking?: string;
  /** Answer every model call from this function (the request body) instead of the script. */
  handler?: (body: MockRequestBody) => ScriptedTurn;
  /** Message Batches (`/v1/messages/batches`): when its jobs end, and which requests it refuses. */
  batch?: MockBatchOptions;
}

/** A running mock server. Close it in `afterEach`/`afterAll`. */
export interface MockAnthropicServer {
  /** The base URL (no `/v1`, as `ANTHROPIC_BASE_URL` takes it). */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** The Message Batches submitted; make the next ones expire or polls fail. */
  readonly batches: MockBatchJobs;
  close(): Promise<void>;
}

const ERROR_TYPES: Record<number, string> = { 400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error" };

/**
 * A server of Anthropic's Messages API on 127.0.0.1: `POST /v1/messages`, answered from a script as a message or
 * as the SSE event stream (`message_start`, `content_block_*`, `message_delta`, `message_stop`), with Anthropic's
 * error bodies for injected failures. It checks what the real API insists on (the key (`x-api-key` or a bearer
 * token) and the `anthropic-version` header, `model`, `max_tokens`, `messages`) and answers 400 otherwise, like the API.
 */
export async function startMockAnthropicServer(options: MockAnthropicServerOptions = {}): Promise<MockAnthropicServer> {
  const script = new MockScript<AnthropicFailure>(options);
  const requests: RecordedRequest[] = [];
  /** The thinking signatures given out: only these may come back. */
  const signatures = new Set<string>();

  /** A model call's body checked and answered as the live API would (a live call and a batch request alike). */
  function modelCall(body: MockRequestBody): { failure: { status: number; message: string } } | { turn: ResolvedTurn; callNumber: number } {
    const missing = ["model", "max_tokens", "messages"].filter((key) => body[key] === undefined);
    if (missing.length > 0) return { failure: { status: 400, message: `${missing.join(", ")}: Field required` } };
    const invalid = checkMessages(body.messages) ?? checkThinking(body, signatures);
    if (invalid) return { failure: { status: 400, message: invalid } };
    const turn = options.handler ? options.handler(body) : script.nextTurn();
    if (turn === undefined) return { failure: { status: 500, message: `mock Anthropic server: no scripted turn left for model call #${script.answered + 1}` } };
    const callNumber = script.countAnswer();
    const resolved = resolveTurn(turn, callNumber, JSON.stringify(body.messages ?? ""));
    resolved.toolCalls = resolved.toolCalls.map((call) => ({ ...call, id: call.id.replace(/^call_/, "toolu_") }));
    if (options.thinking !== undefined) signatures.add(signatureOf(callNumber));
    return { turn: resolved, callNumber };
  }
  const batches = new MockBatchJobs("msgbatch_mock_", options.batch ?? {}, async (body) => {
    const call = modelCall(body);
    if ("failure" in call) return { error: call.failure.message };
    return messageOf(call.turn, String(body.model), call.callNumber, options);
  });

  async function handleBatches(request: IncomingMessage, response: ServerResponse, path: string, body: MockRequestBody, origin: string): Promise<void> {
    const refused = keyRefusal(request);
    if (refused) return sendError(response, refused.status, refused.message);
    if (request.method === "POST" && path === "/v1/messages/batches") {
      const list = body["requests"] as Array<{ custom_id: string; params: MockRequestBody }> | undefined;
      if (!Array.isArray(list) || list.length === 0) return sendError(response, 400, "requests: at least one request is required");
      const job = batches.create(list.map((entry) => ({ customId: entry.custom_id, body: entry.params })));
      return sendJson(response, batchObject(job, origin));
    }
    const route = /^\/v1\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/.exec(path);
    if (!route) return sendError(response, 404, `mock Anthropic server: no route ${request.method} ${path}`);
    const failure = request.method === "GET" && route[2] === undefined ? batches.nextPollFailure() : undefined;
    if (failure !== undefined) return sendError(response, failure, `mock failure ${failure}`);
    const job = route[2] === "/cancel" ? batches.cancel(route[1]!) : await batches.current(route[1]!);
    if (!job) return sendError(response, 404, `batch ${route[1]} not found`);
    if (route[2] !== "/results") return sendJson(response, batchObject(job, origin));
    if (job.state === "running") return sendError(response, 400, "the batch is still processing");
    response.writeHead(200, { "content-type": "application/binary" });
    response.end(batches.served(resultLines(job).map((line) => JSON.stringify(line)), job).map((line) => `${line}\n`).join(""));
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { record, isJson } = await readMockRequest(request, requests);
    if (!isJson) return sendError(response, 400, "mock Anthropic server: the body is not JSON");
    const { path, body } = record;
    if (path.startsWith("/v1/messages/batches")) return handleBatches(request, response, path, body, `http://127.0.0.1:${listener.port}`);
    if (request.method !== "POST" || path !== "/v1/messages") return sendError(response, 404, `mock Anthropic server: no route ${request.method} ${path}`);
    const failure = script.nextFailure();
    if (failure) return sendError(response, failure.status, failure.message ?? `mock failure ${failure.status}`, failure.retryAfter);
    const refused = keyRefusal(request);
    if (refused) return sendError(response, refused.status, refused.message);
    const call = modelCall(body);
    if ("failure" in call) return sendError(response, call.failure.status, call.failure.message);
    const model = String(body.model);
    if (body.stream === true) return sendStream(response, call.turn, model, call.callNumber, options);
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(messageOf(call.turn, model, call.callNumber, options)));
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => sendError(response, 500, `mock Anthropic server failed: ${String(error)}`));
  });
  const listener = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${listener.port}`, requests, batches, close: listener.close };
}

/** What every route of the API insists on: the key (`x-api-key` or a bearer token) and `anthropic-version`. */
function keyRefusal(request: IncomingMessage): { status: number; message: string } | undefined {
  // The SDK (1.x) sends the key as a bearer token; older clients send `x-api-key`. The API takes both.
  if (typeof request.headers["x-api-key"] !== "string" && !/^Bearer \S/.test(request.headers.authorization ?? "")) return { status: 401, message: "x-api-key or authorization header is required" };
  if (typeof request.headers["anthropic-version"] !== "string") return { status: 400, message: "anthropic-version header is required" };
  return undefined;
}

/** A whole Messages API answer of a turn (a live call's, a batch request's). */
function messageOf(turn: ResolvedTurn, model: string, callNumber: number, options: MockAnthropicServerOptions): Record<string, unknown> {
  return { id: `msg_mock_${callNumber}`, type: "message", role: "assistant", model, content: contentOf(turn, callNumber, options), stop_reason: stopReason(turn), stop_sequence: null, usage: usageOf(turn, options) };
}

function signatureOf(callNumber: number): string {
  return `sig-mock-${callNumber}`;
}

/**
 * Extended thinking's rules: a thinking block sent back must carry a signature the server gave; with thinking on,
 * the last assistant turn, when it has tool calls, must start with its thinking (the API refuses the request else).
 */
function checkThinking(body: MockRequestBody, signatures: Set<string>): string | undefined {
  const messages = (body.messages ?? []) as Array<{ role?: unknown; content?: unknown }>;
  let lastAssistant = -1;
  for (const [index, message] of messages.entries()) {
    if (message.role === "assistant") lastAssistant = index;
    const blocks = Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>) : [];
    for (const [position, block] of blocks.entries()) {
      if (block["type"] === "thinking" && !signatures.has(String(block["signature"]))) return `messages.${index}.content.${position}: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  const thinking = body["thinking"] as { type?: unknown } | undefined;
  if (thinking?.type !== "enabled" || lastAssistant < 0) return undefined;
  const blocks = messages[lastAssistant]!.content as Array<Record<string, unknown>>;
  if (!blocks.some((block) => block["type"] === "tool_use")) return undefined;
  const first = String(blocks[0]?.["type"]);
  if (first === "thinking" || first === "redacted_thinking") return undefined;
  return `messages.${lastAssistant}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`;
}

/** The rules of the Messages API that a converter can break: roles alternate from a user turn, content blocks
 * have known types, and every `tool_use` is answered by a `tool_result` in the very next user turn. */
function checkMessages(messages: unknown): string | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return "messages: at least one message is required";
  let expected = "user";
  let pendingToolUses: string[] = [];
  for (const [index, raw] of messages.entries()) {
    const message = raw as { role?: unknown; content?: unknown };
    if (message.role !== expected) return `messages.${index}.role: roles must alternate between "user" and "assistant", starting with "user"`;
    const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : (message.content as Array<Record<string, unknown>>);
    if (!Array.isArray(blocks) || blocks.length === 0) return `messages.${index}: content must be a non-empty list`;
    if (expected === "user") {
      const answered = blocks.filter((block) => block["type"] === "tool_result").map((block) => String(block["tool_use_id"]));
      const missing = pendingToolUses.filter((id) => !answered.includes(id));
      if (missing.length > 0) return `messages.${index}: tool_use ids were found without tool_result blocks immediately after: ${missing.join(", ")}`;
      pendingToolUses = [];
    } else {
      pendingToolUses = blocks.filter((block) => block["type"] === "tool_use").map((block) => String(block["id"]));
    }
    for (const block of blocks) {
      if (block["type"] === "image") {
        // As the API: images come from the user, as base64 of the four types it takes.
        const source = block["source"] as { type?: unknown; media_type?: unknown; data?: unknown } | undefined;
        if (expected !== "user") return `messages.${index}: image blocks are only allowed in user messages`;
        if (source?.type !== "base64" || typeof source.data !== "string" || !["image/png", "image/jpeg", "image/gif", "image/webp"].includes(String(source.media_type))) return `messages.${index}: image.source must be {type: "base64", media_type: image/png|jpeg|gif|webp, data}`;
      } else if (!["text", "tool_use", "tool_result", "thinking", "redacted_thinking"].includes(String(block["type"]))) return `messages.${index}: unknown content block type ${String(block["type"])}`;
    }
    expected = expected === "user" ? "assistant" : "user";
  }
  return undefined;
}

/** Anthropic's own words for a scripted turn's `finish_reason` (`length`, `content_filter`). */
function stopReason(turn: ResolvedTurn): string {
  if (turn.finishReason === "length") return "max_tokens";
  if (turn.finishReason === "content_filter") return "refusal";
  return turn.toolCalls.length > 0 ? "tool_use" : "end_turn";
}

function usageOf(turn: ResolvedTurn, options: MockAnthropicServerOptions): Record<string, number> {
  const read = options.cacheUsage?.read ?? 0;
  const write = options.cacheUsage?.write ?? 0;
  // Anthropic's input_tokens is the uncached part only.
  return { input_tokens: Math.max(0, turn.usage.promptTokens - read - write), output_tokens: turn.usage.completionTokens, cache_read_input_tokens: read, cache_creation_input_tokens: write };
}

function contentOf(turn: ResolvedTurn, callNumber: number, options: MockAnthropicServerOptions): Array<Record<string, unknown>> {
  const blocks: Array<Record<string, unknown>> = [];
  if (options.thinking !== undefined) blocks.push({ type: "thinking", thinking: options.thinking, signature: signatureOf(callNumber) });
  if (turn.text) blocks.push({ type: "text", text: turn.text });
  for (const call of turn.toolCalls) blocks.push({ type: "tool_use", id: call.id, name: call.name, input: JSON.parse(call.arguments) as unknown });
  return blocks;
}

async function sendStream(response: ServerResponse, turn: ResolvedTurn, model: string, callNumber: number, options: MockAnthropicServerOptions): Promise<void> {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const usage = usageOf(turn, options);
  const events: Array<Record<string, unknown>> = [
    { type: "message_start", message: { id: `msg_mock_${callNumber}`, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } },
  ];
  let index = 0;
  if (options.thinking !== undefined) {
    events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
    events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: options.thinking } });
    events.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: signatureOf(callNumber) } });
    events.push({ type: "content_block_stop", index });
    index += 1;
  }
  if (turn.text) {
    events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
    for (const piece of splitIntoChunks(turn.text)) events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
    events.push({ type: "content_block_stop", index });
    index += 1;
  }
  for (const call of turn.toolCalls) {
    events.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } });
    for (const piece of splitIntoChunks(call.arguments)) events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } });
    events.push({ type: "content_block_stop", index });
    index += 1;
  }
  events.push({ type: "message_delta", delta: { stop_reason: stopReason(turn), stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  events.push({ type: "message_stop" });
  for (const event of events) {
    if (response.destroyed) return;
    response.write(`event: ${String(event["type"])}\ndata: ${JSON.stringify(event)}\n\n`);
    await nextTick();
  }
  response.end();
}

function sendError(response: ServerResponse, status: number, message: string, retryAfter?: number): void {
  if (response.headersSent || response.destroyed) return;
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (retryAfter !== undefined) headers["retry-after"] = String(retryAfter);
  response.writeHead(status, headers);
  response.end(JSON.stringify({ type: "error", error: { type: ERROR_TYPES[status] ?? "api_error", message } }));
}

function sendJson(response: ServerResponse, body: unknown): void {
  response.writeHead(200, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/** A Message Batch as the API shows it; an ended one has its `results_url`. */
function batchObject(job: MockBatchJob, origin: string): Record<string, unknown> {
  const lines = job.state === "running" ? [] : resultLines(job);
  const count = (type: string): number => lines.filter((line) => line.result.type === type).length;
  return {
    id: job.id,
    type: "message_batch",
    processing_status: job.state === "running" ? "in_progress" : "ended",
    request_counts: { processing: job.state === "running" ? job.requests.length : 0, succeeded: count("succeeded"), errored: count("errored"), canceled: count("canceled"), expired: count("expired") },
    created_at: new Date(job.createdAt).toISOString(),
    ended_at: job.state === "running" ? null : new Date().toISOString(),
    results_url: job.state === "running" ? null : `${origin}/v1/messages/batches/${job.id}/results`,
  };
}

/** The results JSONL of an ended batch: a job made to fail or expire has every request expired, a cancelled one canceled. */
function resultLines(job: MockBatchJob): Array<{ custom_id: string; result: { type: string; [key: string]: unknown } }> {
  if (!job.results) return job.requests.map((request) => ({ custom_id: request.customId, result: { type: job.state === "cancelled" ? "canceled" : "expired" } }));
  return job.results.map((result) => {
    const answer = result.ok ? (result.answer as { error?: string }) : undefined;
    if (result.ok && answer?.error === undefined) return { custom_id: result.customId, result: { type: "succeeded", message: result.answer } };
    const message = result.ok ? String(answer?.error) : result.message;
    return { custom_id: result.customId, result: { type: "errored", error: { type: "error", error: { type: "invalid_request_error", message } } } };
  });
}
