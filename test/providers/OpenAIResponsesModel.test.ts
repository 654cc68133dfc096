import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ProviderError } from "../../src/errors.js";
import { createModel, OpenAIResponsesModel } from "../../src/providers/index.js";
import type { ToolSchema } from "../../src/providers/index.js";
import { startMockOpenAIServer } from "../../src/testing/index.js";
import type { MockOpenAIServer } from "../../src/testing/index.js";

const WEATHER_TOOL: ToolSchema = {
  type: "function",
  function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } } } },
};

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("OpenAIResponsesModel over HTTP", () => {
  it("round-trips a tool call: function_call out, function_call_output back in", async () => {
    server = await startMockOpenAIServer({
      script: [
        { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" }, id: "call_1" }], usage: { prompt_tokens: 40, completion_tokens: 9 } },
        { text: "Sunny in Paris.", usage: { prompt_tokens: 60, completion_tokens: 4 } },
      ],
    });
    const model = createModel({ model: "gpt-4o", apiType: "response", invokerConfig: { base_url: server.url }, env: { OPENAI_API_KEY: "test" } });
    expect(model).toBeInstanceOf(OpenAIResponsesModel);

    const first = await model.generate({
      messages: [
        { role: "system", content: "You are a weather analyst." },
        { role: "user", content: "Weather in Paris?" },
      ],
      tools: [WEATHER_TOOL],
      modelArgs: { temperature: 0 },
    });
    expect(first.toolCalls).toEqual([{ id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }]);
    expect(first.message.content).toBeNull();
    expect(first.usage).toEqual({ promptTokens: 40, completionTokens: 9 });
    expect(first.finishReason).toBe("tool_calls");

    const sent = server.requests[0]!;
    expect(sent.path).toBe("/v1/responses");
    expect(sent.body["instructions"]).toBe("You are a weather analyst.");
    expect(sent.body.input).toEqual([{ role: "user", content: "Weather in Paris?" }]);
    expect(sent.body.tools).toEqual([{ type: "function", name: "get_weather", description: "Weather for a city", parameters: WEATHER_TOOL.function.parameters, strict: false }]);
    expect(sent.body["temperature"]).toBe(0);

    const texts: string[] = [];
    const second = await model.generate({
      messages: [
        { role: "system", content: "You are a weather analyst." },
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: null, toolCalls: first.toolCalls },
        { role: "tool", content: "Sunny, 22 degrees", toolCallId: "call_1" },
      ],
      tools: [WEATHER_TOOL],
      onText: (text) => texts.push(text),
    });
    expect(second.message.content).toBe("Sunny in Paris.");
    expect(second.usage).toEqual({ promptTokens: 60, completionTokens: 4 });
    expect(texts).toEqual(["Sunny in Paris."]);
    expect(server.requests[1]!.body.input).toEqual([
      { role: "user", content: "Weather in Paris?" },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "function_call_output", call_id: "call_1", output: "Sunny, 22 degrees" },
    ]);
  });

  it("sends a JSON schema as text.format and retries a 500 like the chat model", async () => {
    server = await startMockOpenAIServer({ failures: [{ status: 500 }], script: ['{"ok":true}'] });
    const model = createModel({ model: "gpt-4o", apiType: "response", invokerConfig: { base_url: server.url }, env: { OPENAI_API_KEY: "test" }, retry: { baseDelayMs: 1 } });
    const response = await model.generate({
      messages: [{ role: "user", content: "ok?" }],
      responseFormat: { type: "json_schema", name: "ok", schema: { type: "object" }, strict: true },
    });
    expect(response.message.content).toBe('{"ok":true}');
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.body["text"]).toEqual({ format: { type: "json_schema", name: "ok", schema: { type: "object" }, strict: true } });
  });

  it("reports a 401 naming the key variable", async () => {
    server = await startMockOpenAIServer({ failures: [{ status: 401 }] });
    const model = createModel({ model: "gpt-4o", apiType: "response", invokerConfig: { base_url: server.url, api_key_env: "MY_KEY" }, env: { MY_KEY: "wrong" } });
    const error = await model.generate({ messages: [{ role: "user", content: "hi" }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe("provider_auth");
    expect((error as ProviderError).message).toContain("the API key in MY_KEY was rejected (401)");
  });

  it("quotes a failed response's error on one line: the server's words cannot forge a line of lllm's own", async () => {
    const forged = "lllm: error: your session expired; type your OPENAI_API_KEY";
    const failing = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ id: "resp_1", object: "response", created_at: 0, model: "gpt-4o", status: "failed", error: { code: "server_error", message: `boom\n${forged}` }, output: [] }));
      });
    });
    await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/v1`;
      const model = createModel({ model: "gpt-4o", apiType: "response", invokerConfig: { base_url: url }, env: { OPENAI_API_KEY: "test" } });
      const error = await model.generate({ messages: [{ role: "user", content: "hi" }] }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).message).toContain(`boom\\n${forged} (server_error)`);
      expect((error as ProviderError).message).not.toContain("\n");
    } finally {
      failing.closeAllConnections();
      await new Promise((resolve) => failing.close(resolve));
    }
  });
});
