import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createModel } from "../../src/providers/createModel.js";
import { startMockAnthropicServer, type AnthropicFailure, type MockAnthropicServer, type ScriptedTurn } from "../../src/testing/index.js";
import { ROOT, runCli, type CliResult } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

/** Anthropic's Messages API end to end: the built CLI against a local server of Anthropic's wire format. */

const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");
const output = path.join(ROOT, "test/fixtures/run/output.yaml");
const home = tempDir("lllm-anthropic-home-");
let server: MockAnthropicServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Block = Record<string, unknown>;
type WireMessage = { role: string; content: string | Block[] };

async function run(args: string[], script: ScriptedTurn[], options: { failures?: AnthropicFailure[]; cacheUsage?: { read: number; write: number }; tactic?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  server = await startMockAnthropicServer({ script, ...(options.failures ? { failures: options.failures } : {}), ...(options.cacheUsage ? { cacheUsage: options.cacheUsage } : {}) });
  return runCli(["run", options.tactic ?? loop, "--model", "anthropic/claude-haiku-4-5", ...args], {
    env: { ANTHROPIC_API_KEY: "sk-ant-test-0000", ANTHROPIC_BASE_URL: server.url, LLLM_HOME: home, LLLM_RETRY_DELAY_MS: "1", OPENAI_API_KEY: "", ...options.env },
    timeoutMs: 60_000,
  });
}

const bodyOf = (index: number): Block => server!.requests.filter((request) => request.method === "POST")[index]!.body as Block;
const messagesOf = (index: number): WireMessage[] => bodyOf(index)["messages"] as WireMessage[];
const weather: ScriptedTurn[] = [
  { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }, { name: "get_weather", arguments: { city: "Tokyo" } }] },
  "It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.",
];

describe("anthropic/<model> through the CLI", () => {
  for (const stream of ["--no-stream", "--stream"]) {
    it(`runs the seed's weather transcript with parallel calls (${stream})`, async () => {
      const result = await run(["--input", "What is the weather in Paris and Tokyo?", stream], weather);
      expect(result.stderr).toBe("");
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain("It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.");
      const first = server!.requests[0]!;
      expect(first.path).toBe("/v1/messages");
      expect(first.headers["authorization"]).toBe("Bearer sk-ant-test-0000");
      expect(first.headers["anthropic-version"]).toBeTypeOf("string");
      const body = bodyOf(0);
      expect(body["model"]).toBe("claude-haiku-4-5");
      expect(body["max_tokens"]).toBe(8192);
      expect(body["stream"]).toBe(stream === "--stream");
      // A short system prompt: no cache breakpoint by default (Anthropic caches only long prefixes).
      expect(body["system"]).toBe("You are a weather assistant.");
      expect(messagesOf(0)).toEqual([{ role: "user", content: [{ type: "text", text: "What is the weather in Paris and Tokyo?" }] }]);
      const tools = body["tools"] as Block[];
      expect(tools.map((tool) => tool["name"])).toEqual(["get_weather", "divide"]);
      expect(tools[0]!["input_schema"]).toMatchObject({ type: "object", properties: { city: { type: "string" } } });
      expect(tools[0]!["type"]).toBeUndefined();
      // Both results of the parallel calls in one user turn, after the assistant's two tool_use blocks.
      const second = messagesOf(1);
      expect(second).toHaveLength(3);
      expect(second[1]).toEqual({ role: "assistant", content: [
        { type: "tool_use", id: "toolu_1_0", name: "get_weather", input: { city: "Paris" } },
        { type: "tool_use", id: "toolu_1_1", name: "get_weather", input: { city: "Tokyo" } },
      ] });
      const results = second[2]!.content as Block[];
      expect(second[2]!.role).toBe("user");
      expect(results.map((block) => [block["type"], block["tool_use_id"], block["is_error"]])).toEqual([["tool_result", "toolu_1_0", undefined], ["tool_result", "toolu_1_1", undefined]]);
      expect(results[0]!["content"]).toBe("Return of calling function get_weather with arguments {'city': 'Paris'}:\n---\nSunny, 22 degrees celsius in Paris\n---");
    }, 90_000);
  }

  it("sends a failing tool's error back as an is_error result", async () => {
    const result = await run(["--input", "Divide", "--no-stream"], [{ tool_calls: [{ name: "divide", arguments: { a: 1, b: 0 } }] }, "Cannot divide by zero."]);
    expect(result.code, result.stderr).toBe(0);
    const results = messagesOf(1)[2]!.content as Block[];
    expect(results[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1_0", is_error: true });
    expect(String(results[0]!["content"])).toContain("Error");
  }, 90_000);

  it("at the round cap, the limit text follows the tool results in one user turn and no tools are offered", async () => {
    const call = (city: string): ScriptedTurn => ({ tool_calls: [{ name: "get_weather", arguments: { city } }] });
    const result = await run(["--input", "Weather?", "--max-steps", "1", "--no-stream"], [call("Paris"), "Done."]);
    expect(result.code, result.stderr).toBe(0);
    expect(bodyOf(1)["tools"]).toBeUndefined();
    const last = messagesOf(1)[2]!.content as Block[];
    expect(last.map((block) => block["type"])).toEqual(["tool_result", "text"]);
  }, 90_000);

  it("retries a 429 after its retry-after, then answers", async () => {
    const result = await run(["--input", "Hi", "--no-stream", "--verbose"], ["Hello."], { failures: [{ status: 429, retryAfter: 0, message: "Number of requests has exceeded your rate limit" }] });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("Hello.");
    expect(result.stderr).toContain("429");
    expect(server!.requests).toHaveLength(2);
  }, 90_000);

  it("a 401 is a provider error naming ANTHROPIC_API_KEY, not retried, and the key is not printed", async () => {
    const result = await run(["--input", "Hi", "--json"], [], { failures: [{ status: 401, message: "invalid x-api-key sk-ant-test-0000" }] });
    expect(result.code, result.stderr).toBe(1);
    expect(server!.requests).toHaveLength(1);
    const report = JSON.parse(result.stdout) as { error: { code: string; message: string } };
    expect(report.error.code).toBe("provider_auth");
    expect(report.error.message).toContain("ANTHROPIC_API_KEY");
    expect(result.stdout + result.stderr).not.toContain("sk-ant-test-0000");
  }, 90_000);

  it("structured output goes through a forced answer tool; usage counts cache reads and writes", async () => {
    const result = await run(["--input", "Paris", "--json", "--no-stream"], [{ tool_calls: [{ name: "final_answer", arguments: { city: "Paris", temperature: 22 } }] }], { tactic: output, cacheUsage: { read: 30, write: 20 } });
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { output: unknown; usage: { prompt_tokens: number; cached_prompt_tokens: number } };
    expect(report.output).toEqual({ city: "Paris", temperature: 22 });
    expect(report.usage.cached_prompt_tokens).toBe(30);
    const body = bodyOf(0);
    expect(body["tool_choice"]).toEqual({ type: "tool", name: "final_answer" });
    expect((body["tools"] as Block[])[0]).toMatchObject({ name: "final_answer", input_schema: { type: "object", required: ["city", "temperature"] } });
  }, 90_000);

  it("--dry-run prints the Messages API body", async () => {
    const result = await run(["--input", "Hi", "--dry-run"], []);
    expect(result.code, result.stderr).toBe(0);
    const body = JSON.parse(result.stdout) as Block;
    expect(body).toMatchObject({ model: "claude-haiku-4-5", max_tokens: 8192, system: "You are a weather assistant.", messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }] });
    expect(server!.requests).toHaveLength(0);
  }, 90_000);
});

describe("AnthropicModel request details", () => {
  const longPrompt = "You are a careful weather assistant. ".repeat(200);
  const tool = { type: "function" as const, function: { name: "get_weather", description: "Weather of a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };

  async function generate(modelArgs: Record<string, unknown> | undefined, script: ScriptedTurn[], extra: { thinking?: string } = {}) {
    server = await startMockAnthropicServer({ script, ...extra });
    const model = createModel({ model: "anthropic/claude-haiku-4-5", env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url } });
    return { model, reply: await model.generate({ messages: [{ role: "system", content: longPrompt }, { role: "user", content: "Hi" }], tools: [tool], ...(modelArgs ? { modelArgs } : {}) }) };
  }

  it("puts cache breakpoints on the system prompt and the last tool when they are long", async () => {
    await generate(undefined, ["Hello."]);
    const body = bodyOf(0);
    expect(body["system"]).toEqual([{ type: "text", text: longPrompt, cache_control: { type: "ephemeral" } }]);
    expect((body["tools"] as Block[])[0]!["cache_control"]).toEqual({ type: "ephemeral" });
  });

  it("cache: false turns them off, and is not sent; other model_args pass through", async () => {
    await generate({ cache: false, temperature: 0.2, stop: "END" }, ["Hello."]);
    const body = bodyOf(0);
    expect(body["system"]).toBe(longPrompt);
    expect((body["tools"] as Block[])[0]!["cache_control"]).toBeUndefined();
    expect(body["cache"]).toBeUndefined();
    expect(body["temperature"]).toBe(0.2);
    // OpenAI's `stop` is Anthropic's `stop_sequences`.
    expect(body["stop_sequences"]).toEqual(["END"]);
    expect(body["stop"]).toBeUndefined();
  });

  it("thinking: {budget_tokens} enables extended thinking, and the thinking goes back with the tool results", async () => {
    const { model } = await generate({ thinking: { budget_tokens: 2000 } }, [{ tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] }, "Sunny."], { thinking: "Let me check." });
    expect(bodyOf(0)["thinking"]).toEqual({ type: "enabled", budget_tokens: 2000 });
    expect(bodyOf(0)["max_tokens"]).toBe(2000 + 8192);
    await model.generate({
      messages: [{ role: "user", content: "Hi" }, { role: "assistant", content: null, toolCalls: [{ id: "toolu_1_0", name: "get_weather", arguments: '{"city":"Paris"}' }] }, { role: "tool", content: "Sunny", toolCallId: "toolu_1_0" }],
      tools: [tool],
      modelArgs: { thinking: { budget_tokens: 2000 } },
    });
    const assistant = messagesOf(1)[1]!.content as Block[];
    expect(assistant[0]).toEqual({ type: "thinking", thinking: "Let me check.", signature: "sig-mock-1" });
    expect(assistant[1]).toMatchObject({ type: "tool_use", id: "toolu_1_0" });
  });

  it("reports usage with cache read and write tokens", async () => {
    server = await startMockAnthropicServer({ script: [{ text: "Hi.", usage: { prompt_tokens: 100, completion_tokens: 5 } }], cacheUsage: { read: 60, write: 30 } });
    const model = createModel({ model: "anthropic/claude-haiku-4-5", env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url } });
    const reply = await model.generate({ messages: [{ role: "user", content: "Hi" }], onText: () => {} });
    expect(reply.usage).toEqual({ promptTokens: 100, completionTokens: 5, cachedPromptTokens: 60, cacheWritePromptTokens: 30 });
  });

  it("needs ANTHROPIC_API_KEY for the hosted API, before any call", () => {
    expect(() => createModel({ model: "anthropic/claude-haiku-4-5", env: {} })).toThrow(/ANTHROPIC_API_KEY/);
  });
});
