import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ProviderError } from "../../src/errors.js";
import { createModel } from "../../src/providers/createModel.js";

/** Timeouts, a stalled stream, a 5xx and an overloaded server: the same for Anthropic and Gemini as for OpenAI. */

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A server that answers each request with `answer` (or never, when it returns undefined). */
async function start(answer: (count: number, response: import("node:http").ServerResponse) => void): Promise<string> {
  let count = 0;
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => answer((count += 1), response));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const providers = [
  { model: "anthropic/claude-haiku-4-5", env: (url: string) => ({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: url }), ok: { type: "message", id: "m", role: "assistant", model: "x", content: [{ type: "text", text: "Fine." }], stop_reason: "end_turn", usage: { input_tokens: 3, output_tokens: 1 } } },
  { model: "gemini/gemini-2.5-flash", env: (url: string) => ({ GEMINI_API_KEY: "k", GEMINI_BASE_URL: url }), ok: { candidates: [{ content: { role: "model", parts: [{ text: "Fine." }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1 } } },
];

for (const provider of providers) {
  describe(provider.model, () => {
    it("a server that never answers is a provider_timeout after the model timeout", async () => {
      const url = await start(() => {});
      const model = createModel({ model: provider.model, env: provider.env(url), timeoutMs: 300, retry: { maxRetries: 0 } });
      const error = await model.generate({ messages: [{ role: "user", content: "Hi" }] }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).code).toBe("provider_timeout");
    });

    it("a 5xx (Anthropic's 529 overloaded) is retried, then the answer counts", async () => {
      const retries: string[] = [];
      const url = await start((count, response) => {
        if (count === 1) {
          response.writeHead(529, { "content-type": "application/json" });
          return void response.end(JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }));
        }
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify(provider.ok));
      });
      const model = createModel({ model: provider.model, env: provider.env(url), retry: { baseDelayMs: 1, maxDelayMs: 1 }, onRetry: (notice) => retries.push(notice.cause) });
      const reply = await model.generate({ messages: [{ role: "user", content: "Hi" }] });
      expect(reply.message.content).toBe("Fine.");
      expect(reply.usage).toMatchObject({ promptTokens: 3, completionTokens: 1 });
      expect(retries).toHaveLength(1);
      expect(retries[0]).toContain("HTTP 529");
    });

    it("the key does not follow a redirect to another origin", async () => {
      const elsewhere: Array<Record<string, unknown>> = [];
      const other = createServer((request, response) => {
        elsewhere.push(request.headers);
        response.end("{}");
      });
      await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
      try {
        // Another port is another origin.
        const target = `http://127.0.0.1:${(other.address() as AddressInfo).port}/stolen`;
        const url = await start((_count, response) => {
          response.writeHead(307, { location: target });
          response.end();
        });
        const model = createModel({ model: provider.model, env: provider.env(url), retry: { maxRetries: 0 } });
        const error = await model.generate({ messages: [{ role: "user", content: "Hi" }] }).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(ProviderError);
        expect(elsewhere).toEqual([]);
      } finally {
        other.closeAllConnections();
        await new Promise((resolve) => other.close(resolve));
      }
    });

    it("a body that is not JSON is retried as a bad answer, then fails with a plain provider error", async () => {
      const url = await start((_count, response) => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end("<html>Bad gateway</html>");
      });
      const model = createModel({ model: provider.model, env: provider.env(url), retry: { baseDelayMs: 1, maxDelayMs: 1, maxRetries: 1 } });
      const error = await model.generate({ messages: [{ role: "user", content: "Hi" }] }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).message).toContain("gave up after 2 attempts");
    });
  });
}
