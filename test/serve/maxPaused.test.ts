import OpenAI from "openai";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { runCli } from "../helpers/runCli.js";
import { serveInProcess, shopPackage, type ServingLibrary } from "../helpers/serve.js";
import { tempDir } from "../helpers/tempTree.js";

/**
 * A paused run (waiting at a client's tool calls) holds no place of --concurrency: without a bound, clients that
 * never send their results could fill the server's memory for --pending-ttl. --max-paused bounds them; past it the
 * run paused longest is cancelled, and its client is told no run waits when it comes back.
 */
let mock: MockOpenAIServer;
let serving: ServingLibrary;
let client: OpenAI;

beforeAll(async () => {
  vi.stubEnv("LLLM_HOME", tempDir("lllm-home-"));
  mock = await startMockOpenAIServer({ handler: (body) => ((body.messages ?? []).at(-1)?.role === "tool" ? "Added." : { tool_calls: [{ name: "add_to_cart", arguments: { item: "fig" } }] }) });
  const dir = shopPackage(mock.url);
  serving = await serveInProcess({ tactics: [path.join(dir, "tactics/shop.yaml")], token: "secret-token", maxPaused: 2 });
  client = new OpenAI({ baseURL: `${serving.url}/v1`, apiKey: "secret-token", maxRetries: 0 });
});

afterAll(async () => {
  await serving?.server.stop({ drainTimeoutMs: 0 });
  await mock?.close();
});

const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "add_to_cart", parameters: { type: "object", properties: { item: { type: "string" } } } } }];

describe("lllm serve --max-paused", () => {
  it("keeps at most that many runs paused: the one paused longest is cancelled, and its client's results get a 400", async () => {
    const asked = [];
    for (let n = 0; n < 3; n++) asked.push(await client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: `fig ${n}` }], tools }));
    const resultsOf = (completion: OpenAI.ChatCompletion, n: number) => {
      const message = completion.choices[0]!.message;
      const call = message.tool_calls![0]!;
      return client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: `fig ${n}` }, message, { role: "tool", tool_call_id: call.id, content: "ok" }], tools });
    };
    // Three paused, two kept: the first was cancelled when the third paused.
    await expect(resultsOf(asked[0]!, 0)).rejects.toMatchObject({ status: 400, code: "tool_call_not_found" });
    expect((await resultsOf(asked[1]!, 1)).choices[0]!.message.content).toBe("Added.");
    expect((await resultsOf(asked[2]!, 2)).choices[0]!.message.content).toBe("Added.");
  });

  it("refuses a maxPaused that is not a positive whole number in the library too (0 would cancel every paused run)", async () => {
    await expect(serveInProcess({ tactics: [], maxPaused: 0 })).rejects.toMatchObject({ code: "usage_serve" });
  });

  it("refuses a --max-paused that is not a positive whole number, as a usage error", async () => {
    const result = await runCli(["serve", "--max-paused", "0", "--no-auth"], { cwd: tempDir() });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("--max-paused must be a whole number >= 1 (got `0`)");
  });
});
