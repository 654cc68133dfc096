import { connectionError } from "../../src/providers/toProviderError.js";
import { afterEach, describe, expect, it } from "vitest";
import { ProviderError } from "../../src/errors.js";
import { createModel } from "../../src/providers/index.js";
import type { CreateModelOptions, ModelRequest, ToolSchema } from "../../src/providers/index.js";
import { startMockOpenAIServer } from "../../src/testing/index.js";
import type { MockOpenAIServer, MockOpenAIServerOptions } from "../../src/testing/index.js";

const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5 };
const WEATHER_TOOL: ToolSchema = {
  type: "function",
  function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
};
const ASK: ModelRequest = { messages: [{ role: "user", content: "Weather in Paris?" }] };

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function modelOnMock(mock: MockOpenAIServerOptions, options: Partial<CreateModelOptions> = {}) {
  server = await startMockOpenAIServer(mock);
  const model = createModel({ model: "gpt-4o-mini", invokerConfig: { base_url: server.url }, env: { OPENAI_API_KEY: "test-key" }, retry: FAST_RETRY, ...options });
  return { model, server };
}

async function rejection(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe("OpenAIChatModel over HTTP", () => {
  it("returns a text reply with usage and sends the key as a bearer token", async () => {
    const { model, server } = await modelOnMock({ script: [{ text: "Sunny, 22 degrees.", usage: { prompt_tokens: 12, completion_tokens: 5 } }] });
    const response = await model.generate({ messages: [{ role: "system", content: "Be brief." }, ...ASK.messages] });
    expect(response.message).toEqual({ role: "assistant", content: "Sunny, 22 degrees." });
    expect(response.toolCalls).toEqual([]);
    expect(response.usage).toEqual({ promptTokens: 12, completionTokens: 5 });
    expect(response.finishReason).toBe("stop");
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.path).toBe("/v1/chat/completions");
    expect(server.requests[0]!.headers.authorization).toBe("Bearer test-key");
    expect(server.requests[0]!.body.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in Paris?" },
    ]);
  });

  it("returns tool calls, and sends tools, tool_choice, a JSON schema format and model_args", async () => {
    const { model, server } = await modelOnMock({ script: [{ tool_calls: [{ name: "get_weather", arguments: { city: "Paris" }, id: "call_1" }] }] });
    const response = await model.generate({
      ...ASK,
      tools: [WEATHER_TOOL],
      toolChoice: "required",
      responseFormat: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true },
      modelArgs: { temperature: 0.1, max_tokens: 50, stream: true },
    });
    expect(response.message.content).toBeNull();
    expect(response.toolCalls).toEqual([{ id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }]);
    expect(response.finishReason).toBe("tool_calls");
    const body = server.requests[0]!.body;
    expect(body.tools).toEqual([WEATHER_TOOL]);
    expect(body["tool_choice"]).toBe("required");
    expect(body["response_format"]).toEqual({ type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } });
    expect(body["temperature"]).toBe(0.1);
    expect(body["max_tokens"]).toBe(50);
    // Streaming is decided by onText, not by model_args.
    expect(body.stream).toBeFalsy();
  });

  it("maps an assistant's tool calls and the tool results to the wire format", async () => {
    const { model, server } = await modelOnMock({ script: ["It is sunny."] });
    await model.generate({
      messages: [
        ...ASK.messages,
        { role: "assistant", content: null, toolCalls: [{ id: "call_9", name: "get_weather", arguments: '{"city":"Paris"}' }] },
        { role: "tool", content: "Sunny", toolCallId: "call_9", name: "get_weather" },
      ],
      tools: [WEATHER_TOOL],
    });
    expect(server.requests[0]!.body.messages!.slice(1)).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "call_9", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", content: "Sunny", tool_call_id: "call_9" },
    ]);
    expect(server.requests[0]!.body["tool_choice"]).toBeUndefined();
  });

  it("streams text to onText piece by piece and collects the usage of the final chunk", async () => {
    const { model, server } = await modelOnMock({ script: [{ text: "Sunny all week in Paris.", usage: { prompt_tokens: 30, completion_tokens: 7 } }] });
    const pieces: string[] = [];
    const response = await model.generate({ ...ASK, onText: (delta) => pieces.push(delta) });
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe("Sunny all week in Paris.");
    expect(response.message.content).toBe("Sunny all week in Paris.");
    expect(response.usage).toEqual({ promptTokens: 30, completionTokens: 7 });
    expect(server.requests[0]!.body.stream).toBe(true);
    expect(server.requests[0]!.body["stream_options"]).toEqual({ include_usage: true });
  });

  it("assembles streamed tool calls whose arguments arrive in several deltas", async () => {
    const { model } = await modelOnMock({
      script: [
        {
          text: "Checking both.",
          tool_calls: [
            { name: "get_weather", arguments: { city: "Paris", unit: "celsius" }, id: "call_a" },
            { name: "get_weather", arguments: { city: "Tokyo", unit: "celsius" }, id: "call_b" },
          ],
        },
      ],
    });
    const pieces: string[] = [];
    const response = await model.generate({ ...ASK, tools: [WEATHER_TOOL], onText: (delta) => pieces.push(delta) });
    expect(response.toolCalls).toEqual([
      { id: "call_a", name: "get_weather", arguments: '{"city":"Paris","unit":"celsius"}' },
      { id: "call_b", name: "get_weather", arguments: '{"city":"Tokyo","unit":"celsius"}' },
    ]);
    expect(response.finishReason).toBe("tool_calls");
    expect(pieces.join("")).toBe("Checking both.");
  });

  it("retries after a 500 and succeeds", async () => {
    const { model, server } = await modelOnMock({ failures: [{ status: 500 }, { status: 503 }], script: ["Recovered."] });
    const response = await model.generate(ASK);
    expect(response.message.content).toBe("Recovered.");
    expect(server.requests).toHaveLength(3);
  });

  it("waits as long as a 429's retry-after says, then succeeds", async () => {
    const { model, server } = await modelOnMock({ failures: [{ status: 429, retryAfter: 0.3 }], script: ["Done."] });
    const started = Date.now();
    const response = await model.generate(ASK);
    expect(response.message.content).toBe("Done.");
    expect(server.requests).toHaveLength(2);
    // The backoff alone would be ~1 ms: the wait came from the header.
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it("gives up after maxRetries with the status and the server's message", async () => {
    const { model, server } = await modelOnMock({ failures: Array.from({ length: 5 }, () => ({ status: 500, message: "upstream exploded" })) }, { retry: { ...FAST_RETRY, maxRetries: 2 } });
    const error = await rejection(model.generate(ASK));
    expect(error.code).toBe("provider_http");
    expect(error.message).toContain("500");
    expect(error.message).toContain("upstream exploded");
    expect(error.message).toContain("3 attempts");
    expect(server.requests).toHaveLength(3);
  });

  it("does not retry a 400 and reports the server's message", async () => {
    const { model, server } = await modelOnMock({ failures: [{ status: 400, message: "Invalid schema for function 'get_weather'" }] });
    const error = await rejection(model.generate(ASK));
    expect(error.code).toBe("provider_http");
    expect(error.message).toContain("Invalid schema for function 'get_weather'");
    expect(server.requests).toHaveLength(1);
  });

  it("reports a rejected key (401) naming the variable it came from, without retrying", async () => {
    const { model, server } = await modelOnMock({ failures: [{ status: 401 }] });
    const error = await rejection(model.generate(ASK));
    expect(error.code).toBe("provider_auth");
    expect(error.message).toMatch(/the API key in OPENAI_API_KEY was rejected \(401\)/);
    expect(error.exitCode).toBe(1);
    expect(server.requests).toHaveLength(1);
  });

  it("reports an unknown model (404) naming the model and the base URL", async () => {
    const { model, server } = await modelOnMock({ failures: [{ status: 404 }] }, { model: "gpt-9-turbo" });
    const error = await rejection(model.generate(ASK));
    expect(error.code).toBe("provider_model_not_found");
    expect(error.message).toContain("`gpt-9-turbo`");
    expect(error.message).toContain(server.url);
  });

  it("times out a slow server with provider_timeout", async () => {
    // Long enough for the request to reach the server on a busy machine, far shorter than the server's delay.
    const { model, server } = await modelOnMock({ failures: [{ delayMs: 10_000 }], script: ["too late"] }, { timeoutMs: 1000 });
    const error = await rejection(model.generate(ASK));
    expect(error.code).toBe("provider_timeout");
    expect(error.message).toContain("1 s");
    // The message names the settings that raise the timeout.
    expect(error.hint).toContain("timeout: <seconds>");
    expect(error.hint).toContain("--timeout <seconds>");
    expect(server.requests).toHaveLength(1);
  });

  it("stops at once when the signal aborts, without retrying", async () => {
    const { model, server } = await modelOnMock({ failures: [{ delayMs: 5_000 }], script: ["too late"] });
    const controller = new AbortController();
    // Abort once the server holds the request (an event, not a timer): the answer would come only after 5 s.
    const watch = setInterval(() => {
      if (server.requests.length > 0) controller.abort();
    }, 10);
    await expect(model.generate({ ...ASK, signal: controller.signal })).rejects.toMatchObject({ name: "AbortError" }).finally(() => clearInterval(watch));
    expect(server.requests).toHaveLength(1);
  });

  it("stops during the wait between retries when the signal aborts", async () => {
    const controller = new AbortController();
    // Abort once the 429 came back and the 30 s wait began (an event, not a timer: the first request may take longer).
    const { model, server } = await modelOnMock({ failures: [{ status: 429, retryAfter: 30 }], script: ["too late"] }, { onRetry: () => setImmediate(() => controller.abort(new Error("user pressed Ctrl-C"))) });
    await expect(model.generate({ ...ASK, signal: controller.signal })).rejects.toThrow("user pressed Ctrl-C");
    expect(server.requests).toHaveLength(1);
  });

  it("reports a server that is not running as provider_connection", async () => {
    const { model, server } = await modelOnMock({}, { retry: { ...FAST_RETRY, maxRetries: 1 } });
    await server.close();
    const error = await rejection(model.generate(ASK));
    expect(error.code).toBe("provider_connection");
    expect(error.message).toContain("ECONNREFUSED");
  });

  it("names, in a connection error's hint, the setting the base URL came from", async () => {
    const { server: stopped } = await modelOnMock({});
    await stopped.close();
    const fromConfig = createModel({ model: "gpt-4o-mini", invokerConfig: { base_url: stopped.url }, env: { OPENAI_API_KEY: "k" }, retry: { ...FAST_RETRY, maxRetries: 0 } });
    expect((await rejection(fromConfig.generate(ASK))).hint).toBe("check that the server is running and that the base URL (invoker_config.base_url) is right");
    // The getting-started walk and the mock servers of the docs set OPENAI_BASE_URL, and never an invoker_config.
    const fromEnv = createModel({ model: "gpt-4o-mini", env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: stopped.url }, retry: { ...FAST_RETRY, maxRetries: 0 } });
    expect((await rejection(fromEnv.generate(ASK))).hint).toBe("check that the server is running and that the base URL (OPENAI_BASE_URL) is right");
  });

  it("tells the user to check the network, not a base URL they never set, when the provider's own address fails", () => {
    const refused = new TypeError("fetch failed", { cause: Object.assign(new Error("getaddrinfo ENOTFOUND api.openai.com"), { code: "ENOTFOUND" }) });
    const error = connectionError(refused, { modelName: "gpt-4o-mini", wireModel: "gpt-4o-mini", endpoint: { baseURL: "https://api.openai.com/v1" }, attempts: 1 });
    expect(error.hint).toBe("check this machine's network connection, and the proxy variables (HTTPS_PROXY, NO_PROXY) if it needs a proxy");
    expect(error.message).toBe("cannot reach https://api.openai.com/v1 for model `gpt-4o-mini`: getaddrinfo ENOTFOUND api.openai.com");
  });

  it("says so at once when the mock's script runs out", async () => {
    const { model, server } = await modelOnMock({ script: ["only one"] });
    await model.generate(ASK);
    const error = await rejection(model.generate(ASK));
    expect(error.message).toContain("no scripted turn left for model call #2");
    expect(server.requests).toHaveLength(2);
  });
});
