import { afterEach, describe, expect, it } from "vitest";
import { createModel } from "../../src/providers/createModel.js";
import { startMockAnthropicServer, startMockGeminiServer } from "../../src/testing/index.js";

/**
 * ANTHROPIC_BASE_URL and GEMINI_BASE_URL are the server's root: Anthropic's SDK adds `/v1/messages`, lllm's Gemini
 * client `/v1beta/models/…`. A root copied with its version (`…/v1`, as OpenAI-style URLs are written) must still
 * reach the API, not `/v1/v1/messages`.
 */

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("a provider base URL given with its API version", () => {
  for (const suffix of ["", "/", "/v1", "/v1/"]) {
    it(`anthropic: ANTHROPIC_BASE_URL=<root>${suffix} reaches POST /v1/messages`, async () => {
      const server = await startMockAnthropicServer({ script: ["Hello."] });
      closers.push(() => server.close());
      const model = createModel({ model: "anthropic/claude-haiku-4-5", env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: `${server.url}${suffix}` }, retry: { maxRetries: 0 } });
      const reply = await model.generate({ messages: [{ role: "user", content: "Hi" }] });
      expect(reply.message.content).toBe("Hello.");
      expect(server.requests.map((request) => request.path)).toEqual(["/v1/messages"]);
    });
  }

  it("anthropic: invoker_config.base_url with /v1 is the root too", async () => {
    const server = await startMockAnthropicServer({ script: ["Hello."] });
    closers.push(() => server.close());
    const model = createModel({ model: "anthropic/claude-haiku-4-5", invokerConfig: { base_url: `${server.url}/v1` }, env: { ANTHROPIC_API_KEY: "k" }, retry: { maxRetries: 0 } });
    const reply = await model.generate({ messages: [{ role: "user", content: "Hi" }] });
    expect(reply.message.content).toBe("Hello.");
  });

  for (const suffix of ["", "/v1", "/v1beta", "/v1beta/"]) {
    it(`gemini: GEMINI_BASE_URL=<root>${suffix} reaches POST /v1beta/models/…`, async () => {
      const server = await startMockGeminiServer({ script: ["Hello."] });
      closers.push(() => server.close());
      const model = createModel({ model: "gemini/gemini-2.5-flash", env: { GEMINI_API_KEY: "k", GEMINI_BASE_URL: `${server.url}${suffix}` }, retry: { maxRetries: 0 } });
      const reply = await model.generate({ messages: [{ role: "user", content: "Hi" }] });
      expect(reply.message.content).toBe("Hello.");
      expect(server.requests.map((request) => request.path)).toEqual(["/v1beta/models/gemini-2.5-flash:generateContent"]);
    });
  }

  it("anthropic's own host with /v1 still needs the key (it is the default server)", () => {
    expect(() => createModel({ model: "anthropic/claude-haiku-4-5", env: { ANTHROPIC_BASE_URL: "https://api.anthropic.com/v1" } })).toThrow(/needs an API key in ANTHROPIC_API_KEY/);
  });
});
