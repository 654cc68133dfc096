import { readdirSync } from "node:fs";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { shopPackage, startServeCli, type ServingCli } from "../helpers/serve.js";
import { tempDir } from "../helpers/tempTree.js";

vi.setConfig({ testTimeout: 180_000 });

// A server reads back from the run store what it no longer holds in memory (a response or an A2A task of an earlier
// server, or an id it never made): through one connection for its life. libsql's close() keeps a connection's files
// open until its statements are garbage-collected, so opening the store for each look-up left hundreds of open files.
let mock: MockOpenAIServer;
let shop: string;
let serving: ServingCli | undefined;

beforeAll(async () => {
  mock = await startMockOpenAIServer({ handler: () => "Figs are 3 EUR." });
  shop = shopPackage(mock.url);
});

afterEach(() => {
  serving?.cli.killTree();
  serving = undefined;
});

afterAll(async () => {
  await mock?.close();
});

const openFiles = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

describe("lllm serve: look-ups in the run store", () => {
  it("reads back an earlier server's response, and answers unknown ids without holding a file open for each", async () => {
    const home = tempDir("lllm-home-");
    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    const first = await new OpenAI({ baseURL: `${serving.url}/v1`, apiKey: serving.token!, maxRetries: 0 }).responses.create({ model: "shop", input: "Figs?" });
    process.kill(serving.cli.pid, "SIGTERM");
    expect(await serving.cli.exit(60_000)).toBe(0);

    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    const { url, token } = serving;
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: token!, maxRetries: 0 });
    // From the store: the first server's response, read and continued.
    expect((await client.responses.retrieve(first.id)).output_text).toBe("Figs are 3 EUR.");
    expect((await client.responses.create({ model: "shop", input: "And plums?", previous_response_id: first.id })).previous_response_id).toBe(first.id);

    const before = openFiles(serving.cli.pid);
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const unknown = (n: number): string => `resp_${n.toString(16).padStart(12, "0")}`;
    for (let batch = 0; batch < 30; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, async (_, index) => {
          const n = batch * 10 + index;
          const continued = await fetch(`${url}/v1/responses`, { method: "POST", headers, body: JSON.stringify({ model: "shop", input: "hi", previous_response_id: unknown(n) }) });
          const read = await fetch(`${url}/v1/responses/${unknown(n + 100_000)}`, { headers });
          const task = await fetch(`${url}/a2a`, { method: "POST", headers: { ...headers, "a2a-version": "1.0" }, body: JSON.stringify({ jsonrpc: "2.0", id: n, method: "GetTask", params: { id: `task-${n}` } }) });
          return [continued.status, read.status, ((await task.json()) as { error?: { message?: string } }).error?.message ?? "", await continued.text(), await read.text()] as const;
        }),
      );
      for (const [continued, read, task] of answers) {
        expect([continued, read]).toEqual([404, 404]);
        expect(task).toMatch(/not found/i);
      }
    }
    // 900 look-ups: each opened and closed the store before (two files each until a collection: 500 more open files
    // after 2,000 look-ups); one connection now.
    expect(openFiles(serving.cli.pid) - before).toBeLessThan(40);
  });
});
