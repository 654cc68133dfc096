import { createServer as createHttpServer } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { ProviderError } from "../../src/errors.js";
import { createModel } from "../../src/providers/index.js";
import type { CreateModelOptions, ModelRequest } from "../../src/providers/index.js";
import type { RetryNotice } from "../../src/providers/requestWithRetries.js";
import { startMockOpenAIServer } from "../../src/testing/index.js";
import type { InjectedFailure, MockOpenAIServer, ScriptedTurn } from "../../src/testing/index.js";
import { freePort } from "../helpers/freePort.js";
import { leaksOf } from "../helpers/secretEncodings.js";

const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5 };
const ASK: ModelRequest = { messages: [{ role: "user", content: "Weather in Paris?" }] };

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function modelOn(failures: InjectedFailure[], script: ScriptedTurn[], options: Partial<CreateModelOptions> = {}) {
  server = await startMockOpenAIServer({ failures, script });
  const notices: RetryNotice[] = [];
  const model = createModel({ model: "gpt-4o-mini", invokerConfig: { base_url: server.url }, env: { OPENAI_API_KEY: "test-key" }, retry: FAST_RETRY, onRetry: (notice) => notices.push(notice), ...options });
  return { model, server, notices };
}

async function rejection(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

const HTML = "<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>";
const COMPLETION = (message: unknown) => JSON.stringify({ id: "x", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message, finish_reason: "stop" }] });

describe("retry notices", () => {
  it("carry the HTTP status when the server answered (a batch pauses its provider on 429), and none for a reset", async () => {
    const { model, notices } = await modelOn([{ status: 429, retryAfterMs: 1 }, { cut: "reset" }], ["Sunny."]);
    expect((await model.generate({ messages: [{ role: "user", content: "Weather?" }] })).message.content).toBe("Sunny.");
    expect(notices.map((notice) => notice.status)).toEqual([429, undefined]);
  });
});

describe("bad answers are provider errors, retried where retrying can help (9.11)", () => {
  const retried: Array<[string, InjectedFailure]> = [
    ["an HTML page with status 200", { body: HTML, contentType: "text/html" }],
    ["garbage declared as JSON", { body: "garbage }{", contentType: "application/json" }],
    ["an empty body", { body: "" }],
    ["truncated JSON", { body: COMPLETION({ role: "assistant", content: "Sunny" }).slice(0, 40) }],
    ["a connection reset before the answer", { cut: "reset" }],
    ["a connection reset in the middle of the answer", { cut: "reset_mid_answer" }],
    ["an empty choices list", { body: JSON.stringify({ id: "x", choices: [] }) }],
  ];
  for (const [what, failure] of retried) {
    it(`retries ${what}, then answers`, async () => {
      // Two turns: a cut in the middle of an answer uses one up.
      const { model, server, notices } = await modelOn([failure], ["Sunny.", "Sunny."]);
      const response = await model.generate(ASK);
      expect(response.message.content).toBe("Sunny.");
      expect(server.requests.filter((request) => request.method === "POST")).toHaveLength(2);
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatchObject({ attempt: 1, maxAttempts: 5 });
    });
  }

  it("gives up on repeated garbage with a plain provider error naming the server", async () => {
    const { model } = await modelOn([{ body: HTML, contentType: "text/html" }], [], { retry: { ...FAST_RETRY, maxRetries: 0 } });
    const error = await rejection(model.generate(ASK));
    expect(error.code).toBe("provider_bad_response");
    expect(error.message).toContain(server!.url);
    expect(error.message).toContain("502 Bad Gateway");
  });

  const final: Array<[string, string, string]> = [
    ["null choices", JSON.stringify({ id: "x", choices: null }), "`choices` is null"],
    ["a null message", JSON.stringify({ id: "x", choices: [{ index: 0, message: null, finish_reason: "stop" }] }), "choices[0].message is null"],
    ["content of the wrong type", COMPLETION({ role: "assistant", content: 42 }), "content is the number 42"],
    ["tool_calls of the wrong type", COMPLETION({ role: "assistant", content: null, tool_calls: "get_weather" }), "tool_calls is the text"],
    ["a tool call with no name", COMPLETION({ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { arguments: "{}" } }] }), "needs the tool's name"],
  ];
  for (const [what, body, says] of final) {
    it(`reports ${what} without retrying`, async () => {
      const { model, server, notices } = await modelOn([{ body }], ["never reached"]);
      const error = await rejection(model.generate(ASK));
      expect(error.code).toBe("provider_bad_response");
      expect(error.message).toContain(says);
      expect(server.requests.filter((request) => request.method === "POST")).toHaveLength(1);
      expect(notices).toHaveLength(0);
    });
  }
});

describe("an incomplete or empty reply is never a success (9.12)", () => {
  it("null content without tool calls is an error after the retries", async () => {
    const body = COMPLETION({ role: "assistant", content: null });
    const { model } = await modelOn([{ body }, { body }, { body }], [], { retry: { ...FAST_RETRY, maxRetries: 2 } });
    const error = await rejection(model.generate(ASK));
    expect(error.code).toBe("provider_incomplete_answer");
    expect(error.message).toContain("no text and no tool calls");
    expect(error.message).toContain("gave up after 3 attempts");
  });

  it("a stream that ends without finish_reason or [DONE] after text is an error that says the text is partial", async () => {
    const { model, notices } = await modelOn([{ cut: "end_early" }], ["A long answer that stops somewhere in the middle."]);
    const pieces: string[] = [];
    const error = await rejection(model.generate({ ...ASK, onText: (delta) => pieces.push(delta) }));
    expect(pieces.join("")).toBe("A long answer that stops somewhere in the middle.");
    expect(error.code).toBe("provider_incomplete_answer");
    expect(error.message).toContain("ended before it was complete");
    expect(error.message).toContain("only part of the answer");
    // Text was already shown: a retry would print it twice.
    expect(notices).toHaveLength(0);
  });

  it("a stream cut before any text is retried", async () => {
    const call = { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] };
    // The cut attempt uses up the first turn; the retry gets the second.
    const { model, notices } = await modelOn([{ cut: "end_early" }], [call, call]);
    const response = await model.generate({ ...ASK, onText: () => undefined });
    expect(response.toolCalls.map((toolCall) => toolCall.name)).toEqual(["get_weather"]);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.cause).toContain("ended before it was complete");
  });

  it("a connection reset mid-stream is a provider_connection error, not an internal error", async () => {
    const { model } = await modelOn([{ cut: "reset_mid_answer" }], ["Part one, part two, part three, part four."]);
    const error = await rejection(model.generate({ ...ASK, onText: () => undefined }));
    expect(error.code).toBe("provider_connection");
    expect(error.message).toContain("lost the connection");
  });

  it("a JSON body sent to a streaming request is retried, then an error", async () => {
    const body = COMPLETION({ role: "assistant", content: "Sunny." });
    const { model, server } = await modelOn([{ body }, { body }], [], { retry: { ...FAST_RETRY, maxRetries: 1 } });
    const error = await rejection(model.generate({ ...ASK, onText: () => undefined }));
    expect(error.code).toBe("provider_incomplete_answer");
    expect(server.requests.filter((request) => request.method === "POST")).toHaveLength(2);
  });
});

describe("retries are told, and what cannot succeed is not retried (10.6)", () => {
  it("tells each retry: attempt n/N, the cause and the wait", async () => {
    const { model, notices } = await modelOn([{ status: 500 }, { status: 503 }], ["ok"]);
    await model.generate(ASK);
    expect(notices.map((notice) => [notice.attempt, notice.maxAttempts])).toEqual([
      [1, 5],
      [2, 5],
    ]);
    expect(notices[0]!.cause).toBe("HTTP 500: The server had an error while processing your request.");
    expect(notices[1]!.cause).toBe("HTTP 503: The server is overloaded.");
    expect(notices[0]!.waitMs).toBeGreaterThanOrEqual(0);
  });

  it("does not retry insufficient_quota", async () => {
    const { model, server, notices } = await modelOn([{ status: 429, code: "insufficient_quota", message: "You exceeded your current quota." }], ["never"]);
    const error = await rejection(model.generate(ASK));
    expect(error.code).toBe("provider_quota");
    expect(error.message).toContain("no quota left");
    expect(error.message).toContain("You exceeded your current quota.");
    expect(server.requests.filter((request) => request.method === "POST")).toHaveLength(1);
    expect(notices).toHaveLength(0);
  });

  it("does not retry a refused connection to a server on this machine", async () => {
    const port = await freePort();
    const notices: RetryNotice[] = [];
    const model = createModel({ model: "gpt-4o-mini", invokerConfig: { base_url: `http://127.0.0.1:${port}/v1` }, env: { OPENAI_API_KEY: "test-key" }, retry: FAST_RETRY, onRetry: (notice) => notices.push(notice) });
    const error = await rejection(model.generate(ASK));
    expect(error.code).toBe("provider_connection");
    expect(error.message).toContain("ECONNREFUSED");
    expect(error.message).not.toContain("gave up after");
    expect(notices).toHaveLength(0);
  });
});

describe("the provider's key never appears in an error (9.4)", () => {
  it("redacts a key the server echoes, in every encoding, from the message, hint, stack and causes", async () => {
    const key = "sk-test+Key/with=special-0123456789";
    const echoed = `Incorrect API key provided: Bearer ${key} (${encodeURIComponent(key)}, ${Buffer.from(key).toString("base64")}).`;
    const { model } = await modelOn([{ status: 401, message: echoed }], [], { env: { OPENAI_API_KEY: key } });
    const error = await rejection(model.generate(ASK));
    expect(error.code).toBe("provider_auth");
    expect(error.message).toContain("Incorrect API key provided: Bearer [redacted]");
    const texts = [error.message, error.hint ?? "", error.stack ?? ""];
    for (let cause: unknown = error.cause; cause instanceof Error; cause = cause.cause) texts.push(cause.message, cause.stack ?? "");
    expect(leaksOf(texts.join("\n"), key)).toEqual([]);
  });
});

describe("the Responses API reads answers as carefully", () => {
  it("retries an HTML page, and reports an answer with no output as incomplete", async () => {
    const { model, notices } = await modelOn([{ body: HTML, contentType: "text/html" }], ["Sunny."], { apiType: "response" });
    expect((await model.generate(ASK)).message.content).toBe("Sunny.");
    expect(notices).toHaveLength(1);
    const empty = JSON.stringify({ id: "r", object: "response", status: "completed", output: [] });
    server!.injectFailure(...Array.from({ length: 5 }, () => ({ body: empty })));
    const error = await rejection(model.generate(ASK));
    expect(error.code).toBe("provider_incomplete_answer");
  });
});

describe("the provider's key never follows a redirect to another host", () => {
  it("refuses a cross-origin redirect without retrying; the other host gets nothing", async () => {
    const seen: string[] = [];
    const other = createHttpServer((request, response) => {
      seen.push(String(request.headers.authorization));
      response.end("{}");
    });
    const redirecting = createHttpServer((_request, response) => {
      response.writeHead(307, { location: `http://127.0.0.1:${(other.address() as { port: number }).port}/v1/chat/completions` });
      response.end();
    });
    try {
      for (const server of [other, redirecting]) await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const notices: RetryNotice[] = [];
      const model = createModel({ model: "gpt-4o-mini", invokerConfig: { base_url: `http://127.0.0.1:${(redirecting.address() as { port: number }).port}/v1` }, env: { OPENAI_API_KEY: "sk-redirect-test-key" }, retry: FAST_RETRY, onRetry: (notice) => notices.push(notice) });
      const error = await rejection(model.generate(ASK));
      expect(error.code).toBe("provider_connection");
      expect(error.message).toContain("was not followed");
      expect(seen).toEqual([]);
      expect(notices).toHaveLength(0);
    } finally {
      for (const server of [other, redirecting]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    }
  });
});

describe("streamed answers are checked chunk by chunk", () => {
  const sse = (...events: unknown[]) => ({ body: [...events.map((event) => `data: ${JSON.stringify(event)}\n\n`), "data: [DONE]\n\n"].join(""), contentType: "text/event-stream" });
  const chunk = (delta: unknown, finish: string | null = null) => ({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] });

  it("a streamed tool call with no name is a provider error, not a call to the tool ``", async () => {
    const { model } = await modelOn([sse(chunk({ tool_calls: [{ index: 0, id: "c1", type: "function", function: { arguments: "{}" } }] }), chunk({}, "tool_calls"))], []);
    const error = await rejection(model.generate({ ...ASK, onText: () => undefined }));
    expect(error.code).toBe("provider_bad_response");
    expect(error.message).toContain("needs the tool's name");
  });

  it("a chunk of the wrong shape is a provider error", async () => {
    const { model } = await modelOn([sse(chunk({ content: 7 }), chunk({}, "stop"))], []);
    const error = await rejection(model.generate({ ...ASK, onText: () => undefined }));
    expect(error.code).toBe("provider_bad_response");
    expect(error.message).toContain("content is the number 7");
  });
});
