import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropicServer, startMockGeminiServer, startMockOpenAIServer } from "../../src/testing/index.js";
import type { MockOpenAIServer } from "../../src/testing/index.js";

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${server!.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

describe("the mock OpenAI server", () => {
  it("lists a model, answers from a handler, and records every request", async () => {
    server = await startMockOpenAIServer({ handler: (body) => `you said ${String(body.messages?.[0]?.["content"])}` });
    const models = (await (await fetch(`${server.url}/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data[0]!.id).toBe("mock-model");
    const answer = (await (await post("/chat/completions", { model: "m", messages: [{ role: "user", content: "hi" }] })).json()) as {
      choices: Array<{ message: { content: string } }>;
    };
    expect(answer.choices[0]!.message.content).toBe("you said hi");
    expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual(["GET /v1/models", "POST /v1/chat/completions"]);
  });

  it("serves queued failures before the script, with retry-after, then script turns set later", async () => {
    server = await startMockOpenAIServer({ failures: [{ status: 429, retryAfter: 2 }] });
    server.setScript(["late answer"]);
    const limited = await post("/chat/completions", { model: "m", messages: [] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(((await limited.json()) as { error: { message: string } }).error.message).toContain("Rate limit");
    expect((await post("/chat/completions", { model: "m", messages: [] })).status).toBe(200);
    const exhausted = await post("/chat/completions", { model: "m", messages: [] });
    expect(exhausted.status).toBe(500);
    expect(((await exhausted.json()) as { error: { message: string } }).error.message).toMatch(/no scripted turn left for model call #3 \(\/v1\/chat\/completions\); the script has 1 turn$/);
    expect(server.requests).toHaveLength(3);
  });

  it("streams SSE chunks ending with a usage chunk and [DONE]", async () => {
    server = await startMockOpenAIServer({ script: [{ text: "Hello there", tool_calls: [{ name: "f", arguments: { a: 1 }, id: "c1" }] }] });
    const text = await (await post("/chat/completions", { model: "m", messages: [], stream: true, stream_options: { include_usage: true } })).text();
    const events = text.split("\n\n").filter(Boolean).map((line) => line.replace(/^data: /, ""));
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event) as { choices: Array<{ delta: { tool_calls?: Array<{ index: number; id?: string }> }; finish_reason: string | null }>; usage?: unknown });
    expect(chunks.at(-1)!.usage).toBeDefined();
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("tool_calls");
    const toolDeltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(toolDeltas.length).toBeGreaterThan(2);
    expect(toolDeltas.every((delta) => delta.index === 0)).toBe(true);
    expect(toolDeltas[0]!.id).toBe("c1");
  });
});

describe("every provider mock reads a request the same way", () => {
  const starts = {
    openai: async () => ({ server: await startMockOpenAIServer(), path: "/chat/completions" }),
    anthropic: async () => ({ server: await startMockAnthropicServer(), path: "/v1/messages" }),
    gemini: async () => ({ server: await startMockGeminiServer(), path: "/v1beta/models/m:generateContent" }),
  };
  for (const [name, start] of Object.entries(starts)) {
    it(`${name}: a body that is not JSON is answered 400 and still recorded`, async () => {
      const { server: mock, path } = await start();
      try {
        const answer = await fetch(`${mock.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" });
        expect(answer.status).toBe(400);
        expect(mock.requests).toEqual([expect.objectContaining({ method: "POST", body: { raw: "{not json" } })]);
      } finally {
        await mock.close();
      }
    });
  }
});
