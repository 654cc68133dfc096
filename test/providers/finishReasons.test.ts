import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ProviderError } from "../../src/errors.js";
import { createModel } from "../../src/providers/createModel.js";
import { startMockAnthropicServer, startMockGeminiServer, type ScriptedTurn } from "../../src/testing/index.js";
import { ROOT, runCli, type CliResult } from "../helpers/runCli.js";

/**
 * An answer cut at the output token limit or withheld is no answer, whichever provider says so in its own words
 * (OpenAI's `length`, Anthropic's `max_tokens`, Gemini's `MAX_TOKENS`); an answer that does not say why it stopped
 * may be cut off too.
 */

const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const natives = [
  {
    model: "anthropic/claude-haiku-4-5",
    start: startMockAnthropicServer,
    env: (url: string): NodeJS.ProcessEnv => ({ ANTHROPIC_API_KEY: "sk-ant-test-0000", ANTHROPIC_BASE_URL: url }),
    cut: "max_tokens",
  },
  {
    model: "gemini/gemini-2.5-flash",
    start: startMockGeminiServer,
    env: (url: string): NodeJS.ProcessEnv => ({ GEMINI_API_KEY: "gemini-test-0000", GEMINI_BASE_URL: url }),
    cut: "MAX_TOKENS",
  },
];

async function run(native: (typeof natives)[number], args: string[], script: ScriptedTurn[]): Promise<CliResult> {
  const server = await native.start({ script });
  closers.push(() => server.close());
  return runCli(["run", loop, "--model", native.model, "--input", "Weather in Paris?", ...args], { env: { ...native.env(server.url), LLLM_RETRY_DELAY_MS: "1" }, timeoutMs: 60_000 });
}

for (const native of natives) {
  describe(`${native.model}: an answer cut off or withheld is not a success`, { timeout: 120_000 }, () => {
    it(`an answer cut at the output token limit (${native.cut}) exits 3 naming max_tokens, as OpenAI's length does`, async () => {
      for (const stream of ["--no-stream", "--stream"]) {
        const result = await run(native, [stream], [{ text: "The weather in Par", finish_reason: "length" }]);
        expect(result.code, `${stream}: ${result.stderr}`).toBe(3);
        expect(result.stderr).toContain("cut off at the model's output token limit");
        expect(result.stderr).toContain("max_tokens");
        if (stream === "--no-stream") expect(result.stdout).toBe("");
      }
    });

    it("an answer withheld by the provider's filter exits 1 (answer_filtered)", async () => {
      const result = await run(native, ["--json"], [{ text: "Partial", finish_reason: "content_filter" }]);
      expect(result.code, result.stderr).toBe(1);
      const report = JSON.parse(result.stdout) as { output: unknown; error: { code: string } };
      expect(report.output).toBeNull();
      expect(report.error.code).toBe("answer_filtered");
    });
  });
}

describe("a whole (not streamed) answer without a stop reason is incomplete, for every provider", { timeout: 120_000 }, () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  });

  async function serve(body: unknown): Promise<string> {
    server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const cases = [
    { model: "gpt-4o-mini", env: (url: string) => ({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: `${url}/v1` }), answer: (reason: unknown) => ({ id: "c", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "The weather in Par" }, finish_reason: reason }], usage: { prompt_tokens: 3, completion_tokens: 5 } }) },
    { model: "anthropic/claude-haiku-4-5", env: (url: string) => ({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: url }), answer: (reason: unknown) => ({ type: "message", id: "m", role: "assistant", model: "x", content: [{ type: "text", text: "The weather in Par" }], stop_reason: reason, usage: { input_tokens: 3, output_tokens: 5 } }) },
    { model: "gemini/gemini-2.5-flash", env: (url: string) => ({ GEMINI_API_KEY: "k", GEMINI_BASE_URL: url }), answer: (reason: unknown) => ({ candidates: [{ content: { role: "model", parts: [{ text: "The weather in Par" }] }, finishReason: reason }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 5 } }) },
  ];

  for (const provider of cases) {
    it(`${provider.model}: a null stop reason is a provider_incomplete_answer, not the cut-off text`, async () => {
      const url = await serve(provider.answer(null));
      const model = createModel({ model: provider.model, env: provider.env(url), retry: { maxRetries: 0 } });
      const error = await model.generate({ messages: [{ role: "user", content: "Hi" }] }).then(
        (reply) => reply,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).code).toBe("provider_incomplete_answer");
    });
  }
});

describe("a refusal is one rule on every provider: not retried, not a success (exit 1, answer_filtered)", { timeout: 120_000 }, () => {
  let server: Server | undefined;
  let posts = 0;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  });

  /** A server whose first answer is `first` (JSON, or SSE when the request streams), and every later one `then`. */
  async function serve(first: (stream: boolean) => { type: string; body: string }, then: unknown): Promise<string> {
    posts = 0;
    server = createServer((request, response) => {
      let text = "";
      request.on("data", (chunk: Buffer) => (text += chunk.toString()));
      request.on("end", () => {
        posts += 1;
        const stream = /"stream":\s*true|alt=sse/.test(text + (request.url ?? ""));
        const answer = posts === 1 ? first(stream) : { type: "application/json", body: JSON.stringify(then) };
        response.writeHead(200, { "content-type": answer.type });
        response.end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const json = (body: unknown) => () => ({ type: "application/json", body: JSON.stringify(body) });
  const openAIAnswer = { id: "c", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "Sunny." }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 2 } };
  const cases = [
    {
      name: "OpenAI's message.refusal (whole)",
      model: "gpt-4o-mini",
      args: ["--no-stream", "--json"],
      env: (url: string) => ({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: `${url}/v1` }),
      first: json({ ...openAIAnswer, choices: [{ index: 0, message: { role: "assistant", content: null, refusal: "I can't help with that." }, finish_reason: "stop" }] }),
      then: openAIAnswer,
      says: 'refused to answer: "I can\'t help with that."',
    },
    {
      name: "OpenAI's refusal, streamed",
      model: "gpt-4o-mini",
      args: ["--stream"],
      env: (url: string) => ({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: `${url}/v1` }),
      first: () => ({
        type: "text/event-stream",
        body: [{ choices: [{ index: 0, delta: { role: "assistant", content: null, refusal: "I can't " } }] }, { choices: [{ index: 0, delta: { refusal: "help with that." } }] }, { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }, { choices: [], usage: { prompt_tokens: 3, completion_tokens: 5 } }]
          .map((chunk) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", ...chunk })}\n\n`)
          .join("") + "data: [DONE]\n\n",
      }),
      then: openAIAnswer,
      says: 'refused to answer: "I can\'t help with that."',
    },
    {
      name: "Anthropic's stop_reason refusal",
      model: "anthropic/claude-haiku-4-5",
      args: ["--no-stream", "--json"],
      env: (url: string) => ({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: url }),
      first: json({ type: "message", id: "m", role: "assistant", model: "x", content: [], stop_reason: "refusal", usage: { input_tokens: 3, output_tokens: 0 } }),
      then: { type: "message", id: "m", role: "assistant", model: "x", content: [{ type: "text", text: "Sunny." }], stop_reason: "end_turn", usage: { input_tokens: 3, output_tokens: 2 } },
      says: "withheld by the provider's content filter",
    },
    {
      name: "Gemini's SAFETY",
      model: "gemini/gemini-2.5-flash",
      args: ["--no-stream", "--json"],
      env: (url: string) => ({ GEMINI_API_KEY: "k", GEMINI_BASE_URL: url }),
      first: json({ candidates: [{ content: { role: "model", parts: [] }, finishReason: "SAFETY" }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 0 } }),
      then: { candidates: [{ content: { role: "model", parts: [{ text: "Sunny." }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 } },
      says: "Gemini withheld the answer (finishReason SAFETY)",
    },
    {
      name: "Gemini's blocked prompt",
      model: "gemini/gemini-2.5-flash",
      args: ["--no-stream", "--json"],
      env: (url: string) => ({ GEMINI_API_KEY: "k", GEMINI_BASE_URL: url }),
      first: json({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3 } }),
      then: { candidates: [{ content: { role: "model", parts: [{ text: "Sunny." }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 } },
      says: "Gemini blocked the prompt (SAFETY)",
    },
  ];

  it("an answer cut off before any text (the room spent on reasoning) is a cut answer (exit 3) on the first request, not retried", async () => {
    const url = await serve(json({ ...openAIAnswer, choices: [{ index: 0, message: { role: "assistant", content: null }, finish_reason: "length" }], usage: { prompt_tokens: 3, completion_tokens: 256, completion_tokens_details: { reasoning_tokens: 256 } } }), openAIAnswer);
    const result = await runCli(["run", loop, "--model", "o4-mini", "--input", "Weather in Paris?", "--json"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: `${url}/v1`, LLLM_RETRY_DELAY_MS: "1" }, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(3);
    expect((JSON.parse(result.stdout) as { error: { code: string } }).error.code).toBe("answer_truncated");
    expect(posts).toBe(1);
  });

  for (const provider of cases) {
    it(`${provider.name}: one request, exit 1`, async () => {
      const url = await serve(provider.first, provider.then);
      const result = await runCli(["run", loop, "--model", provider.model, "--input", "Weather in Paris?", ...provider.args], { env: { ...provider.env(url), LLLM_RETRY_DELAY_MS: "1" }, timeoutMs: 60_000 });
      expect(result.code, result.stderr).toBe(1);
      if (provider.args.includes("--json")) {
        const report = JSON.parse(result.stdout) as { output: unknown; error: { code: string; message: string } };
        expect(report.output).toBeNull();
        expect(report.error.code).toBe("answer_filtered");
        expect(report.error.message).toContain(provider.says);
      } else {
        // Streamed to a terminal's stdout: nothing was printed, and stderr says why.
        expect(result.stdout).toBe("");
        expect(result.stderr).toContain(provider.says);
      }
      expect(posts).toBe(1);
    });
  }
});
