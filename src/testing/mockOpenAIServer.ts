import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenOnLoopback } from "./listenOnLoopback.js";
import { setImmediate as nextTick } from "node:timers/promises";
import { ConfigError } from "../errors.js";
import { checkTurns, resolveTurn, splitIntoChunks, toConfigProblems } from "../providers/ScriptedTurn.js";
import type { ResolvedTurn, ScriptedTurn } from "../providers/ScriptedTurn.js";
import { MockScript } from "./MockScript.js";
import { readMockRequest } from "./readMockRequest.js";
import type { MockRequestBody, RecordedRequest } from "./RecordedRequest.js";
import { MockBatchJobs, type MockBatchJob, type MockBatchOptions } from "./MockBatchJobs.js";
import { plural } from "../util/plural.js";

// The recorded request types live in their own file, shared by every mock; re-exported here, where they were first.
export type { MockRequestBody, RecordedRequest } from "./RecordedRequest.js";

/**
 * A failure served instead of an answer, consumed before the script. `{status}` answers with that HTTP status
 * (and `retry-after` / `retry-after-ms` when given; `code` sets `error.code`, e.g. `insufficient_quota`); `{delayMs}`
 * alone answers normally after the delay (a slow server); both together wait, then fail. `{body}` answers with that
 * raw text (garbage, HTML, an empty or truncated body, malformed JSON; status 200 and JSON content type unless
 * given). `{cut}` breaks the connection: `reset` closes it without an answer; `reset_mid_answer` sends the headers
 * and the first part of the next scripted turn (a few chunks when streamed), then resets; `end_early` streams the
 * next scripted turn without its finish chunk and `[DONE]`, and ends cleanly.
 */
export type InjectedFailure =
  | { status: number; retryAfter?: number; retryAfterMs?: number; message?: string; code?: string; delayMs?: number }
  | { delayMs: number }
  | { body: string; status?: number; contentType?: string; delayMs?: number }
  | { cut: "reset" | "reset_mid_answer" | "end_early"; delayMs?: number };

/** Computes the answer from the request body instead of a script. */
export type MockHandler = (body: MockRequestBody, request: RecordedRequest) => ScriptedTurn | Promise<ScriptedTurn>;

export interface MockOpenAIServerOptions {
  /** Answer every model call from this function; when set, `script` is not used. */
  handler?: MockHandler;
  /** Turns answered in order, one per model call. */
  script?: readonly ScriptedTurn[];
  /** Failures served first, one per model call. */
  failures?: InjectedFailure[];
  /** The Batch API (`/v1/files`, `/v1/batches`): when its jobs end, and which requests it refuses. */
  batch?: MockBatchOptions;
  /**
   * The key every route wants (`authorization: Bearer <apiKey>`), the Batch API's included: a request without it is
   * answered 401, as OpenAI does. Default: no key checked (a local server).
   */
  apiKey?: string;
}

/** A running mock server. Close it in `afterEach`/`afterAll`. */
export interface MockOpenAIServer {
  /** The base URL, ending in `/v1`: give it as `base_url`. */
  readonly url: string;
  readonly port: number;
  /** Every request received, including failed ones and `GET /v1/models`. */
  readonly requests: RecordedRequest[];
  /** Replace the remaining script. */
  setScript(turns: readonly ScriptedTurn[]): void;
  /** Queue more failures (after any already queued). */
  injectFailure(...failures: InjectedFailure[]): void;
  /** The Batch API's jobs: how many were submitted, what they held; make the next ones fail or polls fail. */
  readonly batches: MockBatchJobs;
  /** Stop listening and drop open connections, including slow answers still waiting. Safe to call twice. */
  close(): Promise<void>;
}

const DEFAULT_ERROR_MESSAGES: Record<number, string> = {
  401: "Incorrect API key provided.",
  403: "You are not allowed to use this model.",
  429: "Rate limit reached for requests.",
  500: "The server had an error while processing your request.",
  503: "The server is overloaded.",
};

/**
 * Start an OpenAI-compatible HTTP server on 127.0.0.1 (a free port) that answers `POST /v1/chat/completions`
 * (plain and streamed as SSE), `POST /v1/responses` (not streamed) and `GET /v1/models` from a script of turns,
 * with injectable failures, and records every request. It is a real server so that tests cover the real HTTP
 * path: the SDK, streaming, retries and headers.
 */
export async function startMockOpenAIServer(options: MockOpenAIServerOptions = {}): Promise<MockOpenAIServer> {
  const script = new MockScript<InjectedFailure>(options);
  const requests: RecordedRequest[] = [];
  const pendingDelays = new Set<() => void>();
  /** Model calls received, failures included: what a test sees in `requests`. */
  let modelRequests = 0;

  /** Wait, ending early (false) when the server closes or the client goes away. */
  const delay = (milliseconds: number, response: ServerResponse): Promise<boolean> =>
    new Promise((resolve) => {
      const finish = (completed: boolean): void => {
        clearTimeout(timer);
        pendingDelays.delete(cancel);
        response.off("close", cancel);
        resolve(completed);
      };
      const cancel = (): void => finish(false);
      const timer = setTimeout(() => finish(true), milliseconds);
      pendingDelays.add(cancel);
      response.on("close", cancel);
    });

  /** The turn that answers a model call (a live one, a batch request), numbered; undefined when the script is spent. */
  async function nextTurn(body: MockRequestBody, record: RecordedRequest): Promise<{ turn: ResolvedTurn; modelCalls: number } | undefined> {
    const turn = options.handler ? await options.handler(body, record) : script.nextTurn();
    if (turn === undefined) return undefined;
    const modelCalls = script.countAnswer();
    const problems = checkTurns([turn]);
    if (problems.length > 0) throw ConfigError.fromProblems("config_invalid_script", toConfigProblems(problems, "mock handler turn "));
    return { turn: resolveTurn(turn, modelCalls, JSON.stringify(body.messages ?? body.input ?? "")), modelCalls };
  }

  async function answerModelCall(record: RecordedRequest, response: ServerResponse, api: "chat" | "responses"): Promise<void> {
    modelRequests += 1;
    const failure = script.nextFailure();
    if (failure) {
      if (failure.delayMs !== undefined && !(await delay(failure.delayMs, response))) return;
      if ("body" in failure) {
        response.writeHead(failure.status ?? 200, { "content-type": failure.contentType ?? "application/json" });
        return void response.end(failure.body);
      }
      if ("status" in failure) return sendFailure(response, failure, record.body);
      if ("cut" in failure && failure.cut === "reset") return void response.socket?.destroy();
    }
    const cut = failure && "cut" in failure && failure.cut !== "reset" ? failure.cut : undefined;
    const next = await nextTurn(record.body, record);
    if (next === undefined) {
      // x-should-retry: false, so that a client with retries reports this at once instead of retrying it.
      const message = `mock OpenAI server: no scripted turn left for model call #${modelRequests} (${record.path}); the script has ${plural(script.length, "turn")}`;
      return sendJSON(response, 500, { error: { message, type: "server_error", param: null, code: "script_exhausted" } }, { "x-should-retry": "false" });
    }
    const { turn: resolved, modelCalls } = next;
    const model = typeof record.body.model === "string" ? record.body.model : "mock-model";
    if (api === "responses") {
      if (record.body.stream === true) return sendJSON(response, 400, { error: { message: "mock OpenAI server: streaming is not supported on /v1/responses", type: "invalid_request_error", param: "stream", code: null } });
      return sendJSON(response, 200, responsesAnswer(resolved, model, modelCalls));
    }
    if (record.body.stream === true) {
      const streamOptions = record.body["stream_options"] as { include_usage?: boolean } | undefined;
      return sendStream(response, resolved, model, modelCalls, streamOptions?.include_usage === true, cut);
    }
    if (cut === "reset_mid_answer") {
      const text = JSON.stringify(chatAnswer(resolved, model, modelCalls));
      response.writeHead(200, { "content-type": "application/json", "content-length": String(text.length) });
      response.write(text.slice(0, Math.floor(text.length / 2)));
      return void setTimeout(() => response.socket?.destroy(), 20);
    }
    return sendJSON(response, 200, chatAnswer(resolved, model, modelCalls));
  }

  /** A request of a batch job, answered as a live call (script or handler) would be. */
  async function answerBatchLine(body: MockRequestBody): Promise<unknown> {
    const next = await nextTurn(body, { method: "POST", path: "/v1/chat/completions", headers: {}, body });
    if (next === undefined) throw new Error(`mock OpenAI server: no scripted turn left for a batch request; the script has ${plural(script.length, "turn")}`);
    return chatAnswer(next.turn, typeof body.model === "string" ? body.model : "mock-model", next.modelCalls);
  }
  const batches = new MockBatchJobs("batch_mock_", options.batch ?? {}, answerBatchLine);
  /** Uploaded files and the jobs' output and error files, by id. */
  const files = new Map<string, string>();

  async function handleBatchApi(request: IncomingMessage, response: ServerResponse, record: RecordedRequest): Promise<boolean> {
    const { path } = record;
    if (request.method === "POST" && path === "/v1/files") {
      const raw = typeof record.body["raw"] === "string" ? record.body["raw"] : "";
      const form = await new Response(raw, { headers: { "content-type": String(request.headers["content-type"]) } }).formData();
      const file = form.get("file");
      if (form.get("purpose") !== "batch" || !(file instanceof Blob)) return sendJSON(response, 400, { error: { message: "mock OpenAI server: a batch file needs purpose=batch and a file", type: "invalid_request_error", param: null, code: null } }), true;
      const id = `file-mock-${files.size + 1}`;
      files.set(id, await file.text());
      return sendJSON(response, 200, { id, object: "file", bytes: file.size, purpose: "batch", filename: "requests.jsonl", created_at: Math.floor(Date.now() / 1000) }), true;
    }
    if (request.method === "POST" && path === "/v1/batches") {
      const content = files.get(String(record.body["input_file_id"]));
      if (content === undefined) return sendJSON(response, 404, { error: { message: `No such File object: ${String(record.body["input_file_id"])}`, type: "invalid_request_error", param: null, code: null } }), true;
      const lines = content.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as { custom_id: string; body: MockRequestBody });
      const job = batches.create(lines.map((line) => ({ customId: line.custom_id, body: line.body })), record.body["metadata"]);
      await batches.createDelay();
      return sendJSON(response, 200, batchObject(job, String(record.body["input_file_id"]))), true;
    }
    if (request.method === "GET" && path === "/v1/batches") {
      const data = [...batches.jobs.values()].reverse().map((job) => batchObject(job, ""));
      return sendJSON(response, 200, { object: "list", data, has_more: false }), true;
    }
    const route = /^\/v1\/batches\/([^/]+)(\/cancel)?$/.exec(path);
    if (route) {
      const failure = request.method === "GET" ? batches.nextPollFailure() : undefined;
      if (failure !== undefined) return sendFailure(response, { status: failure }, record.body), true;
      const job = route[2] ? batches.cancel(route[1]!) : await batches.current(route[1]!);
      if (!job) return sendJSON(response, 404, { error: { message: `No batch found with id '${route[1]}'.`, type: "invalid_request_error", param: null, code: null } }), true;
      return sendJSON(response, 200, batchObject(job, "", { files, batches })), true;
    }
    const content = /^\/v1\/files\/([^/]+)\/content$/.exec(path);
    if (request.method === "GET" && content) {
      // A file id named after a job whose id needs percent-encoding in a path (`jobIdPrefix`) comes encoded.
      const text = files.get(content[1]!) ?? files.get(decodeURIComponent(content[1]!.replace(/%(?![0-9a-f]{2})/gi, "%25")));
      if (text === undefined) return sendJSON(response, 404, { error: { message: "No such File object", type: "invalid_request_error", param: null, code: null } }), true;
      response.writeHead(200, { "content-type": "application/octet-stream" });
      return response.end(text), true;
    }
    return false;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { record, isJson } = await readMockRequest(request, requests);
    if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendJSON(response, 401, { error: { message: "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.", type: "invalid_request_error", param: null, code: "invalid_api_key" } });
    }
    if (record.path.startsWith("/v1/files") || record.path.startsWith("/v1/batches")) {
      if (await handleBatchApi(request, response, record)) return;
    }
    if (!isJson) return sendJSON(response, 400, { error: { message: "mock OpenAI server: the body is not JSON", type: "invalid_request_error", param: null, code: null } });
    const { path } = record;
    if (request.method === "GET" && path === "/v1/models") {
      return sendJSON(response, 200, { object: "list", data: [{ id: "mock-model", object: "model", created: 0, owned_by: "mock" }] });
    }
    if (request.method === "POST" && path === "/v1/chat/completions") return answerModelCall(record, response, "chat");
    if (request.method === "POST" && path === "/v1/responses") return answerModelCall(record, response, "responses");
    return sendJSON(response, 404, { error: { message: `mock OpenAI server: no route ${request.method} ${path}`, type: "invalid_request_error", param: null, code: null } });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJSON(response, 500, { error: { message: `mock OpenAI server failed: ${String(error)}`, type: "server_error", param: null, code: null } }, { "x-should-retry": "false" });
      else response.destroy();
    });
  });
  const listener = await listenOnLoopback(server);
  const { port } = listener;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    setScript(turns) {
      script.replace(turns);
    },
    injectFailure(...more) {
      script.addFailures(...more);
    },
    batches,
    close() {
      for (const cancel of [...pendingDelays]) cancel();
      return listener.close();
    },
  };
}

function sendJSON(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (response.destroyed) return;
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

function sendFailure(response: ServerResponse, failure: { status: number; retryAfter?: number; retryAfterMs?: number; message?: string; code?: string }, body: MockRequestBody): void {
  const headers: Record<string, string> = {};
  if (failure.retryAfter !== undefined) headers["retry-after"] = String(failure.retryAfter);
  if (failure.retryAfterMs !== undefined) headers["retry-after-ms"] = String(failure.retryAfterMs);
  const message =
    failure.message ??
    (failure.status === 404 ? `The model \`${String(body.model)}\` does not exist or you do not have access to it.` : (DEFAULT_ERROR_MESSAGES[failure.status] ?? `mock failure ${failure.status}`));
  const type = failure.status === 429 ? "rate_limit_error" : failure.status >= 500 ? "server_error" : "invalid_request_error";
  const code = failure.code ?? (failure.status === 404 ? "model_not_found" : null);
  sendJSON(response, failure.status, { error: { message, type: failure.code ?? type, param: null, code } }, headers);
}

function wireUsage(turn: ResolvedTurn): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  return { prompt_tokens: turn.usage.promptTokens, completion_tokens: turn.usage.completionTokens, total_tokens: turn.usage.promptTokens + turn.usage.completionTokens };
}

function chatAnswer(turn: ResolvedTurn, model: string, callNumber: number): unknown {
  const message: Record<string, unknown> = { role: "assistant", content: turn.text, refusal: null };
  if (turn.toolCalls.length > 0) {
    message["tool_calls"] = turn.toolCalls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }));
  }
  return {
    id: `chatcmpl-mock-${callNumber}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: turn.finishReason, logprobs: null }],
    usage: wireUsage(turn),
  };
}

/** Stream the turn the way OpenAI does: role, text in pieces, each tool call's id and name, then its arguments
 * in pieces, the finish reason, the usage chunk if asked for, `[DONE]`. `cut` breaks it off (see InjectedFailure). */
async function sendStream(response: ServerResponse, turn: ResolvedTurn, model: string, callNumber: number, includeUsage: boolean, cut?: "reset_mid_answer" | "end_early"): Promise<void> {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const base = { id: `chatcmpl-mock-${callNumber}`, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model };
  const deltas: Array<Record<string, unknown>> = [{ role: "assistant", content: "" }];
  for (const piece of splitIntoChunks(turn.text ?? "")) deltas.push({ content: piece });
  turn.toolCalls.forEach((call, index) => {
    deltas.push({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] });
    for (const piece of splitIntoChunks(call.arguments)) deltas.push({ tool_calls: [{ index, function: { arguments: piece } }] });
  });
  const events: unknown[] = deltas.map((delta) => ({ ...base, choices: [{ index: 0, delta, finish_reason: null, logprobs: null }] }));
  if (cut === "reset_mid_answer") events.splice(Math.min(events.length, 2));
  if (cut === undefined) {
    events.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: turn.finishReason, logprobs: null }] });
    if (includeUsage) events.push({ ...base, choices: [], usage: wireUsage(turn) });
  }
  for (const event of events) {
    if (response.destroyed) return;
    response.write(`data: ${JSON.stringify(event)}\n\n`);
    // Separate writes on separate ticks, so the client really receives the answer in pieces.
    await nextTick();
  }
  if (cut === "reset_mid_answer") return void setTimeout(() => response.socket?.destroy(), 20);
  if (cut === "end_early") return void response.end();
  response.end("data: [DONE]\n\n");
}

function responsesAnswer(turn: ResolvedTurn, model: string, callNumber: number): unknown {
  const output: unknown[] = [];
  if (turn.text) {
    output.push({ type: "message", id: `msg_mock_${callNumber}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: turn.text, annotations: [] }] });
  }
  for (const call of turn.toolCalls) {
    output.push({ type: "function_call", id: `fc_${call.id}`, call_id: call.id, name: call.name, arguments: call.arguments, status: "completed" });
  }
  return {
    id: `resp_mock_${callNumber}`,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "completed",
    model,
    output,
    usage: {
      input_tokens: turn.usage.promptTokens,
      output_tokens: turn.usage.completionTokens,
      total_tokens: turn.usage.promptTokens + turn.usage.completionTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    },
  };
}

/**
 * A job as OpenAI's `/v1/batches` shows it. When it has ended with answers, its output and error files are made
 * (once) in `files`: one line per request, `response.body` the chat completion or the error (the output file's
 * lines as `batches.served` gives them).
 */
function batchObject(job: MockBatchJob, inputFileId: string, made?: { files: Map<string, string>; batches: MockBatchJobs }): Record<string, unknown> {
  const status = job.state === "running" ? "in_progress" : job.state === "ended" ? "completed" : job.state;
  const results = job.results ?? [];
  let outputFileId: string | null = null;
  let errorFileId: string | null = null;
  if (made && job.results) {
    const { files } = made;
    outputFileId = `file-${job.id}-output`;
    errorFileId = `file-${job.id}-errors`;
    if (!files.has(outputFileId)) {
      const line = (index: number, result: (typeof results)[number]): string =>
        JSON.stringify({ id: `batch_req_${job.id}_${index}`, custom_id: result.customId, response: result.ok ? { status_code: 200, request_id: `req_${index}`, body: result.answer } : { status_code: result.status, request_id: `req_${index}`, body: { error: { message: result.message, type: "invalid_request_error", param: null, code: null } } }, error: null });
      const output = results.flatMap((result, index) => (result.ok ? [line(index, result)] : []));
      files.set(outputFileId, made.batches.served(output, job).map((text) => `${text}\n`).join(""));
      files.set(errorFileId, results.map((result, index) => (result.ok ? "" : `${line(index, result)}\n`)).join(""));
    }
  }
  const failed = results.filter((result) => !result.ok).length;
  return {
    id: job.id,
    object: "batch",
    endpoint: "/v1/chat/completions",
    input_file_id: inputFileId,
    completion_window: "24h",
    status,
    output_file_id: outputFileId,
    error_file_id: errorFileId,
    created_at: Math.floor(job.createdAt / 1000),
    errors: job.state === "failed" ? { object: "list", data: [{ code: "mock_failure", message: "the mock was told to fail this job", param: null, line: null }] } : null,
    request_counts: { total: job.requests.length, completed: results.length - failed, failed },
    metadata: job.label ?? null,
  };
}
