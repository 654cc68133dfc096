import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropicServer, startMockGeminiServer, startMockOpenAIServer } from "../../src/testing/index.js";

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.map((close) => close()));
  closers = [];
});

async function send(url: string, init: { method?: string; headers?: Record<string, string>; body?: string | FormData } = {}): Promise<number> {
  const response = await fetch(url, { method: init.method ?? "GET", ...(init.headers ? { headers: init.headers } : {}), ...(init.body !== undefined ? { body: init.body } : {}) });
  await response.arrayBuffer();
  return response.status;
}

/**
 * The mocks' batch routes want the key as their live routes do: a batch client that forgets it is refused, so a
 * test of it fails, and no job is made.
 */
describe("the mock servers' batch routes check the API key as the live routes do", () => {
  it("Anthropic: every /v1/messages/batches route answers 401 without x-api-key (or a bearer token), 400 without anthropic-version", async () => {
    const server = await startMockAnthropicServer({ script: ["one"], batch: {} });
    closers.push(() => server.close());
    const root = `${server.url}/v1/messages/batches`;
    const create = JSON.stringify({ requests: [{ custom_id: "a-1", params: { model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] } }] });
    const json = { "content-type": "application/json" };
    const version = { "anthropic-version": "2023-06-01" };
    expect(await send(root, { method: "POST", headers: { ...json, ...version }, body: create })).toBe(401);
    expect(await send(root, { method: "POST", headers: { ...json, "x-api-key": "k" }, body: create })).toBe(400);
    expect(server.batches.count).toBe(0);
    expect(await send(root, { method: "POST", headers: { ...json, ...version, "x-api-key": "k" }, body: create })).toBe(200);
    const id = [...server.batches.jobs.keys()][0]!;
    for (const path of [`/${id}`, `/${id}/results`]) expect(await send(`${root}${path}`, { headers: version }), path).toBe(401);
    expect(await send(`${root}/${id}/cancel`, { method: "POST", headers: version })).toBe(401);
    expect(await send(`${root}/${id}`, { headers: { ...version, authorization: "Bearer k" } })).toBe(200);
    expect(await send(`${root}/${id}/results`, { headers: { ...version, "x-api-key": "k" } })).toBe(200);
  });

  it("Gemini: creating, listing, polling and cancelling batches answer 403 without x-goog-api-key", async () => {
    const server = await startMockGeminiServer({ script: ["one"], batch: {} });
    closers.push(() => server.close());
    const create = JSON.stringify({ batch: { displayName: "t", inputConfig: { requests: { requests: [{ request: { contents: [{ role: "user", parts: [{ text: "hi" }] }] }, metadata: { key: "a-1" } }] } } } });
    const url = `${server.url}/v1beta/models/gemini-2.5-flash:batchGenerateContent`;
    const json = { "content-type": "application/json" };
    expect(await send(url, { method: "POST", headers: json, body: create })).toBe(403);
    expect(server.batches.count).toBe(0);
    expect(await send(url, { method: "POST", headers: { ...json, "x-goog-api-key": "k" }, body: create })).toBe(200);
    const id = [...server.batches.jobs.keys()][0]!;
    expect(await send(`${server.url}/v1beta/batches`)).toBe(403);
    expect(await send(`${server.url}/v1beta/batches/${id}`)).toBe(403);
    expect(await send(`${server.url}/v1beta/batches/${id}:cancel`, { method: "POST" })).toBe(403);
    expect(await send(`${server.url}/v1beta/batches`, { headers: { "x-goog-api-key": "k" } })).toBe(200);
    expect(await send(`${server.url}/v1beta/batches/${id}`, { headers: { "x-goog-api-key": "k" } })).toBe(200);
  });

  it("OpenAI with apiKey: model calls, file uploads and downloads, and batches answer 401 without `authorization: Bearer <key>`", async () => {
    const server = await startMockOpenAIServer({ script: ["one", "two"], apiKey: "sk-mock", batch: {} });
    closers.push(() => server.close());
    const key = { authorization: "Bearer sk-mock" };
    const json = { "content-type": "application/json" };
    const chat = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(await send(`${server.url}/chat/completions`, { method: "POST", headers: json, body: chat })).toBe(401);
    expect(await send(`${server.url}/chat/completions`, { method: "POST", headers: { ...json, authorization: "Bearer sk-other" }, body: chat })).toBe(401);
    expect(await send(`${server.url}/chat/completions`, { method: "POST", headers: { ...json, ...key }, body: chat })).toBe(200);
    const upload = (): FormData => {
      const form = new FormData();
      form.append("purpose", "batch");
      form.append("file", new Blob([`${JSON.stringify({ custom_id: "a-1", method: "POST", url: "/v1/chat/completions", body: JSON.parse(chat) as unknown })}\n`]), "requests.jsonl");
      return form;
    };
    expect(await send(`${server.url}/files`, { method: "POST", body: upload() })).toBe(401);
    expect(await send(`${server.url}/files`, { method: "POST", headers: key, body: upload() })).toBe(200);
    const create = JSON.stringify({ input_file_id: "file-mock-1", endpoint: "/v1/chat/completions", completion_window: "24h" });
    expect(await send(`${server.url}/batches`, { method: "POST", headers: json, body: create })).toBe(401);
    expect(server.batches.count).toBe(0);
    expect(await send(`${server.url}/batches`, { method: "POST", headers: { ...json, ...key }, body: create })).toBe(200);
    const id = [...server.batches.jobs.keys()][0]!;
    expect(await send(`${server.url}/batches`)).toBe(401);
    expect(await send(`${server.url}/batches/${id}`)).toBe(401);
    expect(await send(`${server.url}/batches/${id}`, { headers: key })).toBe(200);
    expect(await send(`${server.url}/files/file-${id}-output/content`)).toBe(401);
    expect(await send(`${server.url}/files/file-${id}-output/content`, { headers: key })).toBe(200);
    expect(await send(`${server.url}/batches/${id}/cancel`, { method: "POST" })).toBe(401);
  });
});
