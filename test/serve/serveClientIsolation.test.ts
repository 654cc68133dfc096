import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody, type ScriptedTurn } from "../../src/testing/index.js";
import { shopPackage, startServeCli, type ServingCli } from "../helpers/serve.js";

vi.setConfig({ testTimeout: 180_000 });

// Clients of one `lllm serve` share its token: what keeps one out of another's runs is that the ids it would need
// cannot be guessed. Here, the ids of a client's tool calls, which continue its paused run.
let mock: MockOpenAIServer;
let answer: (body: MockRequestBody) => ScriptedTurn;
let serving: ServingCli;

beforeAll(async () => {
  mock = await startMockOpenAIServer({ handler: (body) => answer(body) });
  serving = await startServeCli([shopPackage(mock.url)]);
});

afterAll(async () => {
  serving?.cli.killTree();
  await mock?.close();
});

const last = (body: MockRequestBody): { role: string; content?: string } => (body.messages as Array<{ role: string; content?: string }>).at(-1)!;

describe("lllm serve: one client and another's paused run", () => {
  it("gives a client tool call an id of its own, not the model's predictable one: another client cannot guess it", async () => {
    // As a local OpenAI-compatible server numbers its calls (lllm reads a call without an id as `call_<index>` too).
    answer = (body) => (last(body).role === "tool" ? `Your secret order: ${last(body).content}` : { tool_calls: [{ name: "add_to_cart", arguments: { item: "pear" }, id: "call_0" }] });
    const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "add_to_cart", parameters: { type: "object", properties: { item: { type: "string" } } } } }];
    const alice = new OpenAI({ baseURL: `${serving.url}/v1`, apiKey: serving.token!, maxRetries: 0 });
    const mallory = new OpenAI({ baseURL: `${serving.url}/v1`, apiKey: serving.token!, maxRetries: 0 });
    const asked: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "a pear, to my home address" }];
    const first = await alice.chat.completions.create({ model: "shop", messages: asked, tools });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(call.id).toMatch(/^call_[0-9a-f]{24}$/);

    // Another client guesses the model's id: no run of its own waits for it, and Alice's is not handed over.
    const guessed: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "x" }, { role: "assistant", content: null, tool_calls: [{ id: "call_0", type: "function", function: { name: "add_to_cart", arguments: "{}" } }] }, { role: "tool", tool_call_id: "call_0", content: "hijacked" }];
    await expect(mallory.chat.completions.create({ model: "shop", messages: guessed, tools })).rejects.toMatchObject({ status: 400, code: "tool_call_not_found" });

    // Alice's run still waits for her, and her result continues it.
    const second = await alice.chat.completions.create({ model: "shop", messages: [...asked, first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "pear added" }], tools });
    expect(second.choices[0]!.message.content).toContain("pear added");
  });
});
