import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, run, setTracingDisabled, tool as agentTool } from "@openai/agents";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody, type ScriptedTurn } from "../../src/testing/index.js";
import { shopPackage, startServeCli, type ServingCli } from "../helpers/serve.js";

vi.setConfig({ testTimeout: 180_000 });

// Clients people use, against `lllm serve` run as a user runs it: the Vercel AI SDK (openai-compatible provider),
// OpenAI Agents JS with lllm as its model and a function tool of its own, and the MCP SDK's client at /mcp.
type WireMessage = { role: string; content?: string | null };
let mock: MockOpenAIServer;
let answer: (body: MockRequestBody) => ScriptedTurn | Promise<ScriptedTurn>;
let serving: ServingCli;

const posts = (): MockRequestBody[] => mock.requests.filter((request) => request.method === "POST").map((request) => request.body);
const lastOf = (body: MockRequestBody): WireMessage => (body.messages as WireMessage[]).at(-1)!;
const toolNames = (body: MockRequestBody): string[] => ((body.tools ?? []) as Array<{ function: { name: string } }>).map((entry) => entry.function.name);

/** The tactic's model: calls the client's `add_to_cart` once, then answers with what the client's tool returned. */
const cartModel = (body: MockRequestBody): ScriptedTurn => {
  const last = lastOf(body);
  if (last.role === "tool") return `Your cart: ${last.content!.split("\n")[2]}`;
  return toolNames(body).includes("add_to_cart") ? { tool_calls: [{ name: "add_to_cart", arguments: { item: "pear" } }] } : "No cart tool.";
};

beforeAll(async () => {
  setTracingDisabled(true);
  mock = await startMockOpenAIServer({ handler: (body) => answer(body) });
  serving = await startServeCli([shopPackage(mock.url)]);
});

afterAll(async () => {
  serving?.cli.killTree();
  await mock?.close();
});

describe("the Vercel AI SDK (@ai-sdk/openai-compatible)", () => {
  const provider = () => createOpenAICompatible({ name: "lllm", baseURL: `${serving.url}/v1`, apiKey: serving.token!, includeUsage: true });

  it("generateText gets the tactic's answer and usage", async () => {
    answer = () => "Quinces are 3 EUR.";
    const result = await generateText({ model: provider()("shop"), prompt: "Quinces?" });
    expect(result.text).toBe("Quinces are 3 EUR.");
    expect(result.usage.totalTokens).toBeGreaterThan(0);
  });

  it("generateText with an image part: the tactic's model gets the image after the text", async () => {
    answer = () => "A red dot.";
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const result = await generateText({ model: provider()("shop"), messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image", image: Buffer.from(png, "base64"), mediaType: "image/png" }] }] });
    expect(result.text).toBe("A red dot.");
    expect(lastOf(posts().at(-1)!).content).toEqual([{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } }]);
  });

  it("streamText with a client tool: the SDK runs its tool, the same lllm run continues and answers", async () => {
    answer = cartModel;
    const added: string[] = [];
    const result = streamText({
      model: provider()("shop"),
      prompt: "Put a pear in my cart",
      tools: { add_to_cart: tool({ description: "Add an item to the cart", inputSchema: jsonSchema<{ item: string }>({ type: "object", properties: { item: { type: "string" } }, required: ["item"] }), execute: async ({ item }) => (added.push(item), `${item} added`) }) },
      stopWhen: stepCountIs(3),
    });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    expect(added).toEqual(["pear"]);
    expect(text).toBe("Your cart: pear added");
  });
});

describe("OpenAI Agents JS with lllm as its model", () => {
  const addToCart = (added: string[]) => agentTool({ name: "add_to_cart", description: "Add an item to the cart", parameters: z.object({ item: z.string() }), execute: async ({ item }) => (added.push(item), `${item} added`) });
  // The Agents SDK's types name the openai package's CommonJS build; the client is the same at run time.
  type AgentsClient = ConstructorParameters<typeof OpenAIResponsesModel>[0];
  const openai = (): AgentsClient => new OpenAI({ baseURL: `${serving.url}/v1`, apiKey: serving.token!, maxRetries: 0 }) as unknown as AgentsClient;

  it("runs an agent on the Responses API whose function tool the lllm run calls", async () => {
    answer = cartModel;
    const added: string[] = [];
    const agent = new Agent({ name: "front desk", instructions: "Help the customer.", model: new OpenAIResponsesModel(openai(), "shop"), tools: [addToCart(added)] });
    const result = await run(agent, "Put a pear in my cart");
    expect(added).toEqual(["pear"]);
    expect(result.finalOutput).toBe("Your cart: pear added");
    // The agent's instructions reached the tactic's model after its own system prompt.
    expect((posts().at(-1)!.messages as WireMessage[]).slice(0, 2).map((message) => message.content)).toEqual(["You are a shop clerk.", "Help the customer."]);
  });

  it("runs an agent on Chat Completions the same way", async () => {
    answer = cartModel;
    const added: string[] = [];
    const agent = new Agent({ name: "front desk", instructions: "Help.", model: new OpenAIChatCompletionsModel(openai(), "shop"), tools: [addToCart(added)] });
    const result = await run(agent, "Put a pear in my cart");
    expect(added).toEqual(["pear"]);
    expect(result.finalOutput).toBe("Your cart: pear added");
  });
});

describe("the MCP SDK's client at /mcp", () => {
  it("lists and calls the served package's tools (its tactics among them), with the same token", async () => {
    const client = new Client({ name: "test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${serving.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${serving.token}` } } }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((entry) => entry.name).sort()).toEqual(["lookup_price", "shop", "slow_wait"]);
      const result = await client.callTool({ name: "lookup_price", arguments: { item: "fig" } });
      expect(result.content).toEqual([{ type: "text", text: "fig: 3 EUR" }]);
    } finally {
      await client.close();
    }
    const refused = new Client({ name: "test", version: "1" });
    await expect(refused.connect(new StreamableHTTPClientTransport(new URL(`${serving.url}/mcp`)))).rejects.toThrow(/Unauthorized/);
  });
});
