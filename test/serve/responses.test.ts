import OpenAI from "openai";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody, type ScriptedTurn } from "../../src/testing/index.js";
import { serveInProcess, shopPackage, type ServingLibrary } from "../helpers/serve.js";
import { tempDir } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { existsSync } from "node:fs";
import { RunStore } from "../../src/store/RunStore.js";
import { runCli } from "../helpers/runCli.js";

vi.setConfig({ testTimeout: 120_000 });

// The Responses API with the official openai SDK against `serve()`.
type WireMessage = { role: string; content?: string | null };
let mock: MockOpenAIServer;
let answer: (body: MockRequestBody) => ScriptedTurn | Promise<ScriptedTurn>;
let serving: ServingLibrary;
let client: OpenAI;
let shop: string;

const posts = (): MockRequestBody[] => mock.requests.filter((request) => request.method === "POST").map((request) => request.body);
const messagesOf = (body: MockRequestBody): WireMessage[] => (body.messages ?? []) as WireMessage[];
const lastOf = (body: MockRequestBody): WireMessage => messagesOf(body).at(-1)!;
const cart: OpenAI.Responses.FunctionTool = { type: "function", name: "add_to_cart", description: "Add to the cart", parameters: { type: "object", properties: { item: { type: "string" } }, required: ["item"] }, strict: false };

beforeAll(async () => {
  vi.stubEnv("LLLM_HOME", tempDir("lllm-home-"));
  mock = await startMockOpenAIServer({ handler: (body) => answer(body) });
  shop = shopPackage(mock.url);
  serving = await serveInProcess({ tactics: [path.join(shop, "tactics/shop.yaml")], token: "tok-responses" });
  client = new OpenAI({ baseURL: `${serving.url}/v1`, apiKey: "tok-responses", maxRetries: 0 });
});

afterAll(async () => {
  await serving?.server.stop({ drainTimeoutMs: 0 });
  await mock?.close();
});

describe("responses with the openai SDK", () => {
  it("creates a response from text input with instructions; GET reads it back, DELETE removes it", async () => {
    answer = () => "Cherries are 3 EUR.";
    const response = await client.responses.create({ model: "shop", input: "Cherries?", instructions: "Answer briefly." });
    expect(response).toMatchObject({ object: "response", status: "completed", model: "shop", instructions: "Answer briefly.", error: null });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe("Cherries are 3 EUR.");
    expect(response.output[0]).toMatchObject({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Cherries are 3 EUR." }] });
    expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);
    expect(messagesOf(posts().at(-1)!).map((message) => message.role)).toEqual(["system", "system", "user"]);
    expect(messagesOf(posts().at(-1)!)[1]!.content).toBe("Answer briefly.");
    const read = await client.responses.retrieve(response.id);
    expect(read.output_text).toBe("Cherries are 3 EUR.");
    await client.responses.delete(response.id);
    await expect(client.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
    // Deleted twice, or never made: 404.
    await expect(client.responses.delete(response.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.delete("resp_0123456789ab")).rejects.toMatchObject({ status: 404 });
  });

  it("continues from previous_response_id: the earlier turns are sent again", async () => {
    answer = (body) => `Reply to ${messagesOf(body).filter((message) => message.role !== "system").map((message) => message.content).join(" | ")}`;
    const first = await client.responses.create({ model: "shop", input: "one" });
    const second = await client.responses.create({ model: "shop", input: "two", previous_response_id: first.id });
    expect(second.output_text).toBe("Reply to one | Reply to one | two");
    expect(second.previous_response_id).toBe(first.id);
    await expect(client.responses.create({ model: "shop", input: "x", previous_response_id: "resp_000" })).rejects.toMatchObject({ status: 404, code: "previous_response_not_found" });
  });

  it("streams the events clients expect, each numbered", async () => {
    answer = () => "Grapes are 3 EUR a bunch.";
    const stream = await client.responses.create({ model: "shop", input: "Grapes?", stream: true });
    const events = [];
    for await (const event of stream) events.push(event);
    const types = events.map((event) => event.type).filter((type, index, all) => type !== "response.output_text.delta" || all[index - 1] !== type);
    expect(types).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const deltas = events.flatMap((event) => (event.type === "response.output_text.delta" ? [event.delta] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("Grapes are 3 EUR a bunch.");
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response.output_text).toBe("Grapes are 3 EUR a bunch.");
  });

  it("a function call round trip: function_call output items, continued by function_call_output items (whole input, then previous_response_id)", async () => {
    answer = (body) => (lastOf(body).role === "tool" ? `Cart says: ${lastOf(body).content!.split("\n")[2]}` : { tool_calls: [{ name: "add_to_cart", arguments: { item: "lime" } }] });
    const first = await client.responses.create({ model: "shop", input: "a lime", tools: [cart] });
    expect(first.status).toBe("completed");
    const call = first.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ name: "add_to_cart", arguments: '{"item":"lime"}', status: "completed" });
    const second = await client.responses.create({
      model: "shop",
      tools: [cart],
      input: [{ role: "user", content: "a lime" }, { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments }, { type: "function_call_output", call_id: call.call_id, output: "lime added" }],
    });
    expect(second.output_text).toBe("Cart says: lime added");
    // The same with previous_response_id: only the outputs are sent.
    const third = await client.responses.create({ model: "shop", input: "a lime", tools: [cart] });
    const thirdCall = third.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
    const fourth = await client.responses.create({ model: "shop", tools: [cart], previous_response_id: third.id, input: [{ type: "function_call_output", call_id: thirdCall.call_id, output: "done twice" }] });
    expect(fourth.output_text).toBe("Cart says: done twice");
  });

  it("a function call round trip, streamed: the call's item and its arguments events", async () => {
    answer = (body) => (lastOf(body).role === "tool" ? "ok" : { tool_calls: [{ name: "add_to_cart", arguments: { item: "nut" } }] });
    const stream = await client.responses.create({ model: "shop", input: "a nut", tools: [cart], stream: true });
    const events = [];
    for await (const event of stream) events.push(event);
    expect(events.map((event) => event.type)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done", "response.completed"]);
    const done = events[4] as OpenAI.Responses.ResponseFunctionCallArgumentsDoneEvent;
    expect(done).toMatchObject({ name: "add_to_cart", arguments: '{"item":"nut"}' });
  });

  it("maps text.format json_schema to structured output", async () => {
    answer = () => '{"item":"date"}';
    const schema = { type: "object", properties: { item: { type: "string" } }, required: ["item"], additionalProperties: false };
    const response = await client.responses.create({ model: "shop", input: "a date as JSON", text: { format: { type: "json_schema", name: "item", schema, strict: true } } });
    expect(JSON.parse(response.output_text)).toEqual({ item: "date" });
    expect(posts().at(-1)!.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "item", schema } });
  });

  it("cancels a response in progress: its run stops and it reads cancelled", async () => {
    answer = (body) => (lastOf(body).role === "tool" ? "never" : { tool_calls: [{ name: "slow_wait", arguments: {} }] });
    let id: string | undefined;
    const stream = await client.responses.create({ model: "shop", input: "wait", stream: true });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const event of stream) {
        seen.push(event.type);
        if (event.type === "response.created") id = event.response.id;
      }
    })();
    expect(await waitUntil(() => id !== undefined && existsSync(path.join(shop, "tools/started.txt")), 60_000)).toBe(true);
    const cancelled = await client.responses.cancel(id!);
    expect(cancelled.status).toBe("cancelled");
    await reading;
    expect(seen.at(-1)).toBe("response.failed");
    await expect(client.responses.cancel(id!)).rejects.toMatchObject({ status: 400, code: "response_not_cancellable" });
  });

  // Last: it prunes the whole log of this file's server.
  it("lllm logs prune deletes the kept responses with their runs", async () => {
    answer = () => "Plums are 2 EUR.";
    const response = await client.responses.create({ model: "shop", input: "Plums?" });
    const file = path.join(process.env.LLLM_HOME!, "logs.db");
    const kept = async (): Promise<boolean> => {
      const store = await RunStore.open(file);
      try {
        return store.getResponse(response.id) !== undefined;
      } finally {
        store.close();
      }
    };
    expect(await waitUntil(kept, 60_000)).toBe(true);
    const pruned = await runCli(["logs", "prune", "--older-than", "0s"], { env: { LLLM_HOME: process.env.LLLM_HOME! } });
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stderr).toMatch(/deleted [1-9]\d* runs? /);
    expect(await kept()).toBe(false);
  });
});
