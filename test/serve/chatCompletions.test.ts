import OpenAI from "openai";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody, type ScriptedTurn } from "../../src/testing/index.js";
import { RunStore } from "../../src/store/RunStore.js";
import { serveInProcess, shopPackage, type ServingLibrary } from "../helpers/serve.js";
import { tempDir } from "../helpers/tempTree.js";

vi.setConfig({ testTimeout: 120_000 });

// The official openai SDK against `serve()`: each served tactic is a model; the tactic's own model is the mock.
type WireMessage = { role: string; content?: string | null; tool_call_id?: string; tool_calls?: Array<{ id: string; function: { name: string } }> };
let mock: MockOpenAIServer;
let answer: (body: MockRequestBody) => ScriptedTurn | Promise<ScriptedTurn>;
let serving: ServingLibrary;
let client: OpenAI;
let home: string;
const SERVICE_TOKEN = "shop-svc-7f3a9c2e41";

const posts = (): MockRequestBody[] => mock.requests.filter((request) => request.method === "POST").map((request) => request.body);
const messagesOf = (body: MockRequestBody): WireMessage[] => (body.messages ?? []) as WireMessage[];
const lastOf = (body: MockRequestBody): WireMessage => messagesOf(body).at(-1)!;

beforeAll(async () => {
  home = tempDir("lllm-home-");
  vi.stubEnv("LLLM_HOME", home);
  // A credential of the server's environment, which lllm itself never uses: the server reads it when it starts.
  vi.stubEnv("SHOP_SERVICE_TOKEN", SERVICE_TOKEN);
  mock = await startMockOpenAIServer({ handler: (body) => answer(body) });
  const dir = shopPackage(mock.url);
  serving = await serveInProcess({ tactics: [path.join(dir, "tactics/shop.yaml")], token: "secret-token" });
  client = new OpenAI({ baseURL: `${serving.url}/v1`, apiKey: "secret-token", maxRetries: 0 });
});

afterAll(async () => {
  await serving?.server.stop({ drainTimeoutMs: 0 });
  await mock?.close();
});

/** The runs the store holds, newest first. */
function storedRuns() {
  const store = RunStore.openSync(path.join(home, "logs.db"));
  try {
    return store.listRuns({ limit: 100 });
  } finally {
    store.close();
  }
}

describe("chat completions with the openai SDK", () => {
  it("lists each served tactic as a model, and finds one by id", async () => {
    const models = await client.models.list();
    expect(models.data.map((model) => ({ id: model.id, owned_by: model.owned_by, object: model.object }))).toEqual([{ id: "shop", owned_by: "lllm", object: "model" }]);
    expect((await client.models.retrieve("shop")).id).toBe("shop");
    await expect(client.models.retrieve("nope")).rejects.toMatchObject({ status: 404, code: "model_not_found" });
  });

  it("answers with the tactic's run: its own tools run server-side, usage counts the whole run, the run is recorded as served", async () => {
    answer = (body) => (lastOf(body).role === "tool" ? "Apples cost 3 EUR." : { tool_calls: [{ name: "lookup_price", arguments: { item: "apples" } }], usage: { prompt_tokens: 10, completion_tokens: 5 } });
    const completion = await client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: "How much are apples?" }], user: "alice", metadata: { team: "fruit" } });
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe("shop");
    expect(completion.choices[0]!.message.content).toBe("Apples cost 3 EUR.");
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    const calls = posts().slice(-2);
    expect(lastOf(calls[1]!).content).toContain("apples: 3 EUR");
    // Two model calls: 10 + 5 scripted, then the mock's estimate for the answer.
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(10);
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
    const run = storedRuns()[0]!;
    expect(run.status).toBe("ok");
    expect(run.served).toMatchObject({ route: "chat.completions", model: "shop", response_id: completion.id, client: { user: "alice", metadata: { team: "fruit" } } });
    expect(run.prompt_tokens + run.completion_tokens).toBe(completion.usage!.total_tokens);
  });

  it("keeps the server's environment credentials out of every run's record, its later runs too", async () => {
    answer = (body) => (lastOf(body).role === "tool" ? `Done with ${SERVICE_TOKEN}.` : { tool_calls: [{ name: "lookup_price", arguments: { item: SERVICE_TOKEN } }] });
    const ids: string[] = [];
    for (let index = 0; index < 2; index++) {
      await client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: `Price of ${SERVICE_TOKEN}?` }] });
      ids.push(storedRuns()[0]!.id);
    }
    expect(new Set(ids).size).toBe(2);
    const store = RunStore.openSync(path.join(home, "logs.db"));
    try {
      for (const id of ids) {
        const record = JSON.stringify(store.getRun(id));
        // The input, the tool's arguments, the model's answer: each in the record, the token in none.
        expect(record).not.toContain(SERVICE_TOKEN);
        expect(record.split("[redacted]").length).toBeGreaterThan(3);
      }
    } finally {
      store.close();
    }
  });

  it("puts the client's system messages after the tactic's system prompt, and earlier turns before the input", async () => {
    answer = () => "Noted.";
    await client.chat.completions.create({
      model: "shop",
      messages: [
        { role: "system", content: "Answer in French." },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello!" },
        { role: "developer", content: "Be brief." },
        { role: "user", content: "Pears?" },
      ],
    });
    expect(messagesOf(posts().at(-1)!).map((message) => [message.role, message.content])).toEqual([
      ["system", "You are a shop clerk."],
      ["system", "Answer in French."],
      ["system", "Be brief."],
      ["user", "Hi"],
      ["assistant", "Hello!"],
      ["user", "Pears?"],
    ]);
  });

  it("streams chat.completion.chunks: the role, the content deltas, the finish reason, the usage, [DONE]", async () => {
    answer = () => "Bananas are 3 EUR a kilo, fresh today.";
    const stream = await client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: "Bananas?" }], stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant");
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("Bananas are 3 EUR a kilo, fresh today.");
    expect(chunks.filter((chunk) => (chunk.choices[0]?.delta.content ?? "") !== "").length).toBeGreaterThan(1);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("stop");
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.at(-1)!.usage!.total_tokens).toBeGreaterThan(0);
    // As OpenAI's: with include_usage every other chunk has `usage: null`.
    expect(chunks.slice(0, -1).map((chunk) => chunk.usage)).toEqual(chunks.slice(0, -1).map(() => null));
    expect(posts().at(-1)!.stream).toBe(true);
  });

  it("maps response_format json_schema to the tactic's structured output", async () => {
    answer = () => '{"item":"kiwi","price":3}';
    const schema = { type: "object", properties: { item: { type: "string" }, price: { type: "number" } }, required: ["item", "price"], additionalProperties: false };
    const completion = await client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: "Kiwi as JSON" }], response_format: { type: "json_schema", json_schema: { name: "price", schema, strict: true } } });
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ item: "kiwi", price: 3 });
    expect(posts().at(-1)!.response_format).toEqual({ type: "json_schema", json_schema: { name: "price", schema, strict: true } });
  });

  it("passes temperature, top_p, seed, stop and max_completion_tokens to the model calls", async () => {
    answer = () => "ok";
    await client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: "x" }], temperature: 0.3, top_p: 0.9, seed: 7, stop: ["END"], max_completion_tokens: 99 });
    expect(posts().at(-1)).toMatchObject({ temperature: 0.3, top_p: 0.9, seed: 7, stop: ["END"], max_tokens: 99 });
  });

  it("a client tool round trip: the server's tools of the round run, the client gets its call, its result continues the same run", async () => {
    answer = (body) => {
      const last = lastOf(body);
      if (last.role === "tool") return `Total: ${messagesOf(body).filter((message) => message.role === "tool").map((message) => message.content!.split("\n")[2]).join(" + ")}`;
      return { tool_calls: [{ name: "lookup_price", arguments: { item: "melon" } }, { name: "add_to_cart", arguments: { item: "melon", quantity: 2 }, id: "call_cart_1" }] };
    };
    const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "add_to_cart", description: "Add to the client's cart", parameters: { type: "object", properties: { item: { type: "string" }, quantity: { type: "integer" } }, required: ["item"] } } }];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Two melons in my cart, please" }];
    const first = await client.chat.completions.create({ model: "shop", messages, tools });
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const call = first.choices[0]!.message.tool_calls![0]!;
    // Its id is the server's own, not the model's (`call_cart_1`): see serveClientIsolation.test.ts.
    expect(call).toMatchObject({ id: expect.stringMatching(/^call_[0-9a-f]{24}$/), type: "function", function: { name: "add_to_cart" } });
    expect(JSON.parse((call as { function: { arguments: string } }).function.arguments)).toEqual({ item: "melon", quantity: 2 });
    // The client's tool was offered with its own declaration, beside the tactic's.
    expect((posts().at(-1)!.tools as Array<{ function: { name: string; description: string } }>).map((tool) => tool.function.name)).toEqual(["lookup_price", "slow_wait", "add_to_cart"]);
    const before = posts().length;
    messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "added 2 melons" });
    const second = await client.chat.completions.create({ model: "shop", messages, tools });
    expect(second.choices[0]!.finish_reason).toBe("stop");
    // The server tool's result and the client's, in the run's own dialog: one more model call, no new run.
    expect(second.choices[0]!.message.content).toBe("Total: melon: 3 EUR + added 2 melons");
    expect(posts().length).toBe(before + 1);
    const runs = storedRuns().filter((run) => run.served?.response_id === first.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.status).toBe("ok");
    expect(runs[0]!.llm_calls).toBe(2);
    expect(second.usage!.total_tokens).toBe(runs[0]!.prompt_tokens + runs[0]!.completion_tokens);
  });

  it("a client tool round trip, streamed: the call arrives as a tool_calls delta with finish_reason tool_calls", async () => {
    answer = (body) => (lastOf(body).role === "tool" ? "Done." : { tool_calls: [{ name: "add_to_cart", arguments: { item: "fig" } }] });
    const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "add_to_cart", parameters: { type: "object", properties: { item: { type: "string" } } } } }];
    const stream = await client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: "a fig" }], tools, stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const delta = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(delta).toHaveLength(1);
    expect(delta[0]!.function!.name).toBe("add_to_cart");
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("tool_calls");
    const again = await client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: "a fig" }, { role: "assistant", content: null, tool_calls: [{ id: delta[0]!.id!, type: "function", function: { name: "add_to_cart", arguments: delta[0]!.function!.arguments! } }] }, { role: "tool", tool_call_id: delta[0]!.id!, content: "ok" }], tools, stream: true });
    let text = "";
    for await (const chunk of again) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("Done.");
  });

  it("honours tool_choice none (the client's tools are not offered) and required (the first request asks for a call)", async () => {
    answer = () => "fine";
    const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "add_to_cart", parameters: { type: "object", properties: {} } } }];
    await client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: "x" }], tools, tool_choice: "none" });
    expect((posts().at(-1)!.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name)).not.toContain("add_to_cart");
    answer = (body) => (lastOf(body).role === "tool" ? "ok" : { tool_calls: [{ name: "add_to_cart", arguments: {} }] });
    const first = await client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: "x" }], tools, tool_choice: "required", parallel_tool_calls: false });
    expect(posts().at(-1)).toMatchObject({ tool_choice: "required", parallel_tool_calls: false });
    const call = first.choices[0]!.message.tool_calls![0]!;
    await client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: "x" }, first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "done" }], tools });
    expect(posts().at(-1)!.tool_choice).toBeUndefined();
  });

  it("refuses a client tool named as one of the tactic's own, and tool results no run waits for (400, with param)", async () => {
    await expect(client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: { name: "lookup_price", parameters: {} } }] })).rejects.toMatchObject({ status: 400, code: "tool_name_clash", param: "tools[0]" });
    await expect(
      client.chat.completions.create({ model: "shop", messages: [{ role: "user", content: "x" }, { role: "assistant", content: null, tool_calls: [{ id: "call_unknown", type: "function", function: { name: "f", arguments: "{}" } }] }, { role: "tool", tool_call_id: "call_unknown", content: "r" }] }),
    ).rejects.toMatchObject({ status: 400, code: "tool_call_not_found", param: "messages" });
  });
});

describe("a tactic that uses another as a tool", () => {
  it("streams only its own answer: the nested tactic's answer is a tool result, not text for the client", async () => {
    const outer = 'name: errands\npackages: [..]\nprompt: "{input}"\nagent_configs:\n  - name: runner\n    system_prompt: You run errands.\n    model_name: gpt-test\n    invoker_config: {base_url: "' + mock.url + '"}\n    tools: [shop.tactics:shop]\n';
    const dir = shopPackage(mock.url, { errands: outer });
    const nested = await serveInProcess({ tactics: [path.join(dir, "tactics/errands.yaml")], token: "secret-token" });
    try {
      answer = (body) => {
        const messages = messagesOf(body);
        if (messages[0]!.content === "You are a shop clerk.") return "NESTED ANSWER about prices";
        return lastOf(body).role === "tool" ? "Errand done." : { tool_calls: [{ name: "shop", arguments: { task: "price of tea?" } }] };
      };
      const stream = await new OpenAI({ baseURL: `${nested.url}/v1`, apiKey: "secret-token", maxRetries: 0 }).chat.completions.create({ model: "errands", messages: [{ role: "user", content: "buy tea" }], stream: true });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      expect(text).toBe("Errand done.");
      expect(JSON.stringify(messagesOf(posts().at(-1)!))).toContain("NESTED ANSWER about prices");
    } finally {
      await nested.server.stop({ drainTimeoutMs: 0 });
    }
  });
});
