import { existsSync } from "node:fs";
import path from "node:path";
import { Role, TaskState, type Message, type Part, type Task } from "@a2a-js/sdk";
import { ClientFactory, JsonRpcTransportFactory, type Client } from "@a2a-js/sdk/client";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody, type ScriptedTurn } from "../../src/testing/index.js";
import { runCli } from "../helpers/runCli.js";
import { shopPackage, startServeCli, type ServingCli } from "../helpers/serve.js";
import { tempDir, writeTree } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";

vi.setConfig({ testTimeout: 180_000 });

// The official A2A SDK's client against `lllm serve` run as a user runs it: the card, a blocking send, a stream
// (status messages, the answer in chunks), tasks/get (after a restart too), tasks/cancel, and input-required for a
// tool that needs approval. The tactic's model is the mock.
type WireMessage = { role: string; content?: string | null };
let mock: MockOpenAIServer;
let answer: (body: MockRequestBody) => ScriptedTurn | Promise<ScriptedTurn>;
let shop: string;
let home: string;
let serving: ServingCli | undefined;

const lastOf = (body: MockRequestBody): WireMessage => (body.messages as WireMessage[]).at(-1)!;
const priceModel = (body: MockRequestBody): ScriptedTurn => (lastOf(body).role === "tool" ? `It costs: ${lastOf(body).content!.split("\n")[2]}` : { tool_calls: [{ name: "lookup_price", arguments: { item: "fig" } }] });

/** A user's text message, as the SDK's types want it. */
const userMessage = (text: string, extra: Partial<Message> = {}): Message => ({ messageId: crypto.randomUUID(), contextId: "", taskId: "", role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }], metadata: undefined, extensions: [], referenceTaskIds: [], ...extra });
const textOf = (parts: Part[] | undefined): string => (parts ?? []).map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("");
const send = (client: Client, message: Message, token: string) => client.sendMessage({ tenant: "", message, configuration: undefined, metadata: undefined }, { serviceParameters: { Authorization: `Bearer ${token}` } });

/** A client of the server, made from its card as the SDK makes one (the card is read without the token). */
async function clientOf(url: string): Promise<Client> {
  return new ClientFactory({ transports: [new JsonRpcTransportFactory()] }).createFromUrl(url);
}

beforeAll(async () => {
  mock = await startMockOpenAIServer({ handler: (body) => answer(body) });
  shop = shopPackage(mock.url, {
    careful: `name: careful\ndescription: Looks prices up, asking first.\npackages: [..]\nprompt: "{input}"\nrequire_approval: [lookup_price]\nagent_configs:\n  - name: clerk\n    system_prompt: You are a careful clerk.\n    model_name: gpt-test\n    invoker_config: {base_url: "${mock.url}"}\n    tools: [lookup_price]\n`,
  });
  // A test file of the shop tactic: its inputs are the author's test data, never published on the card.
  writeTree(shop, { "tests/shop.test.yaml": "tactic: ../tactics/shop.yaml\ncases:\n  - name: figs\n    input: What do the secret test figs cost?\n    assert: [{contains: EUR}]\n" });
  home = tempDir("lllm-home-");
});

afterEach(() => {
  serving?.cli.killTree();
  serving = undefined;
});

afterAll(async () => {
  await mock?.close();
});

describe("lllm serve over A2A, with the @a2a-js/sdk client", () => {
  it("serves the agent card without the token: a skill per tactic (no test inputs), the bearer scheme, streaming; lllm a2a card prints the same", async () => {
    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    const response = await fetch(`${serving.url}/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } });
    expect(response.status).toBe(200);
    // Made from the request's Host (no --public-url): a cache in front must not give it to a request for another.
    expect(response.headers.get("vary")?.split(/,\s*/)).toEqual(expect.arrayContaining(["A2A-Version", "Host"]));
    const card = (await response.json()) as { name: string; capabilities: { streaming: boolean }; securitySchemes: Record<string, unknown>; supportedInterfaces: Array<{ url: string; protocolVersion: string }>; skills: Array<{ id: string; description: string; examples?: string[] }> };
    expect(card.capabilities.streaming).toBe(true);
    expect(card.securitySchemes).toEqual({ bearer: { httpAuthSecurityScheme: { description: expect.any(String), scheme: "Bearer" } } });
    expect(card.supportedInterfaces.map((entry) => [entry.url, entry.protocolVersion])).toEqual([[`${serving.url}/a2a`, "1.0"], [`${serving.url}/a2a`, "0.3"]]);
    expect(card.skills.map((skill) => [skill.id, skill.description, skill.examples ?? []])).toEqual([
      ["careful", "Looks prices up, asking first.", []],
      ["shop", "Answers questions about prices.", []],
    ]);
    // A 0.3 client (no A2A-Version header) reads the same card in 0.3's shape.
    const legacy = (await (await fetch(`${serving.url}/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
    expect(JSON.stringify(card) + JSON.stringify(legacy)).not.toContain("secret test figs");
    expect(legacy).toMatchObject({ protocolVersion: "0.3.0", url: `${serving.url}/a2a`, preferredTransport: "JSONRPC", securitySchemes: { bearer: { type: "http", scheme: "bearer" } }, capabilities: { streaming: true } });
    // The JSON-RPC endpoint wants the token.
    expect((await fetch(`${serving.url}/a2a`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(401);
    const printed = await runCli(["a2a", "card", shop, "--url", "http://agents.example:9000"], { env: { LLLM_HOME: home } });
    expect(printed.code, printed.stderr).toBe(0);
    const printedCard = JSON.parse(printed.stdout) as typeof card;
    expect(printedCard.supportedInterfaces[0]!.url).toBe("http://agents.example:9000/a2a");
    expect({ ...printedCard, supportedInterfaces: [] }).toEqual({ ...card, supportedInterfaces: [] });
  });

  it("message/send runs the skill named in the metadata and answers with a completed task; tasks/get returns it after a restart", async () => {
    answer = priceModel;
    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    const client = await clientOf(serving.url);
    const result = (await send(client, userMessage("How much are figs?", { metadata: { skill: "shop" } }), serving.token!)) as Task;
    expect(result.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(result.artifacts.map((artifact) => [artifact.name, textOf(artifact.parts)])).toEqual([["answer", "It costs: fig: 3 EUR"]]);
    // Two skills and none named: the task is rejected, saying which to name.
    const unnamed = (await send(client, userMessage("How much?"), serving.token!)) as Task;
    expect(unnamed.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(textOf(unnamed.status?.message?.parts)).toContain('name one in the message\'s metadata, {"skill": "…"}');

    process.kill(serving.cli.pid, "SIGTERM");
    expect(await serving.cli.exit(60_000)).toBe(0);
    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    const again = await (await clientOf(serving.url)).getTask({ tenant: "", id: result.id, historyLength: undefined }, { serviceParameters: { Authorization: `Bearer ${serving.token}` } });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(again.artifacts[0]?.parts)).toBe("It costs: fig: 3 EUR");
    const listed = await runCli(["logs", "--served", "--json"], { env: { LLLM_HOME: home } });
    expect((JSON.parse(listed.stdout) as { runs: Array<{ served: { route: string; model: string } }> }).runs.map((run) => [run.served.route, run.served.model])).toContainEqual(["a2a", "shop"]);
    // No client lists the tasks: they would be every client's (one token for all), with their messages and answers.
    const listing = await fetch(`${serving.url}/a2a`, { method: "POST", headers: { authorization: `Bearer ${serving.token}`, "content-type": "application/json", "a2a-version": "1.0" }, body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ListTasks", params: {} }) });
    const listingText = await listing.text();
    expect(listingText).not.toContain(result.id);
    expect(JSON.parse(listingText)).toMatchObject({ id: 7, error: { message: expect.stringContaining("ListTasks is not offered") } });

    // `lllm logs prune` deletes a task with its run.
    process.kill(serving.cli.pid, "SIGTERM");
    expect(await serving.cli.exit(60_000)).toBe(0);
    expect((await runCli(["logs", "prune", "--older-than", "0s"], { env: { LLLM_HOME: home } })).code).toBe(0);
    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    await expect((await clientOf(serving.url)).getTask({ tenant: "", id: result.id, historyLength: undefined }, { serviceParameters: { Authorization: `Bearer ${serving.token}` } })).rejects.toThrow(/not found/i);
  });

  it("an image sent as a raw file part reaches an agent skill's model; a file by URL, or of another type, is rejected", async () => {
    answer = () => "A red dot.";
    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    const card = (await (await fetch(`${serving.url}/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } })).json()) as { skills: Array<{ id: string; inputModes: string[] }> };
    expect(card.skills.find((skill) => skill.id === "shop")!.inputModes).toEqual(["text/plain", "image/png", "image/jpeg", "image/gif", "image/webp"]);
    const client = await clientOf(serving.url);
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const file = (content: Part["content"], mediaType: string): Part => ({ content, metadata: undefined, filename: "dot.png", mediaType });
    const withFile = (part: Part): Message => { const message = userMessage("What is this?", { metadata: { skill: "shop" } }); return { ...message, parts: [...message.parts, part] }; };
    const seen = (await send(client, withFile(file({ $case: "raw", value: Buffer.from(png, "base64") }, "image/png")), serving.token!)) as Task;
    expect(seen.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(seen.artifacts[0]?.parts)).toBe("A red dot.");
    const sent = mock.requests.filter((request) => request.method === "POST").at(-1)!.body;
    expect((sent.messages as Array<{ role: string; content: unknown }>).at(-1)!.content).toEqual([{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } }]);
    const posts = mock.requests.length;
    const byUrl = (await send(client, withFile(file({ $case: "url", value: `${mock.url}/dot.png` }, "image/png")), serving.token!)) as Task;
    expect(byUrl.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(textOf(byUrl.status?.message?.parts)).toContain("fetches no URL");
    const pdf = (await send(client, withFile(file({ $case: "raw", value: Buffer.from("%PDF-1.4") }, "application/pdf")), serving.token!)) as Task;
    expect(pdf.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(textOf(pdf.status?.message?.parts)).toContain('"application/pdf"');
    expect(mock.requests.length).toBe(posts);
  });

  it("message/stream: working, each tool call as a status message, the answer in chunks of one artifact, completed", async () => {
    answer = (body) => (lastOf(body).role === "tool" ? "Figs are 3 EUR each, fresh today." : { tool_calls: [{ name: "lookup_price", arguments: { item: "fig" } }] });
    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    const client = await clientOf(serving.url);
    const events: string[] = [];
    let text = "";
    let chunks = 0;
    let taskId = "";
    for await (const event of client.sendMessageStream({ tenant: "", message: userMessage("Figs?", { metadata: { skill: "shop" } }), configuration: undefined, metadata: undefined }, { serviceParameters: { Authorization: `Bearer ${serving.token}` } })) {
      const payload = event.payload;
      if (payload?.$case === "task") {
        events.push(`task ${TaskState[payload.value.status!.state]}`);
        taskId = payload.value.id;
      }
      else if (payload?.$case === "statusUpdate") events.push(`status ${TaskState[payload.value.status!.state]}${payload.value.status?.message ? `: ${textOf(payload.value.status.message.parts)}` : ""}`);
      else if (payload?.$case === "artifactUpdate") {
        text += textOf(payload.value.artifact?.parts);
        chunks++;
        if (!events.includes("artifact")) events.push("artifact");
        if (payload.value.lastChunk) events.push("last chunk");
      }
    }
    expect(events).toEqual(["task TASK_STATE_SUBMITTED", "status TASK_STATE_WORKING", 'status TASK_STATE_WORKING: calling lookup_price {"item":"fig"}', "artifact", "last chunk", "status TASK_STATE_COMPLETED"]);
    expect(text).toBe("Figs are 3 EUR each, fresh today.");
    expect(chunks).toBeGreaterThan(2);
    // Kept whole: tasks/get reads the answer as one text part.
    const kept = await client.getTask({ tenant: "", id: taskId, historyLength: undefined }, { serviceParameters: { Authorization: `Bearer ${serving.token}` } });
    expect(kept.artifacts[0]!.parts.map((part) => part.content)).toEqual([{ $case: "text", value: "Figs are 3 EUR each, fresh today." }]);
  });

  it("tasks/cancel stops the run as Ctrl-C does: the tool's signal aborts, the task is canceled, the run interrupted; a second cancel is refused", async () => {
    answer = (body) => (lastOf(body).role === "tool" ? "never" : { tool_calls: [{ name: "slow_wait", arguments: {} }] });
    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    const client = await clientOf(serving.url);
    const auth = { serviceParameters: { Authorization: `Bearer ${serving.token}` } };
    const submitted = (await client.sendMessage({ tenant: "", message: userMessage("Wait", { metadata: { skill: "shop" } }), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true }, metadata: undefined }, auth)) as Task;
    expect(await waitUntil(() => existsSync(path.join(shop, "tools/started.txt")), 60_000)).toBe(true);
    const cancelled = await client.cancelTask({ tenant: "", id: submitted.id, metadata: undefined }, auth);
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(existsSync(path.join(shop, "tools/aborted.txt"))).toBe(true);
    const task = await client.getTask({ tenant: "", id: submitted.id, historyLength: undefined }, auth);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // Cancelled once: a task in a terminal state is not cancelable (A2A's TaskNotCancelableError, -32002), in 1.0 and 0.3.
    await expect(client.cancelTask({ tenant: "", id: submitted.id, metadata: undefined }, auth)).rejects.toThrow(/already canceled/);
    const legacy = await fetch(`${serving.url}/a2a`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${serving.token}` }, body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tasks/cancel", params: { id: submitted.id } }) });
    expect(await legacy.json()).toMatchObject({ id: 3, error: { code: -32002 } });
    await expect(client.cancelTask({ tenant: "", id: "no-such-task", metadata: undefined }, auth)).rejects.toThrow(/not found/i);
    const listed = await runCli(["logs", "--served", "--json", "-n", "1"], { env: { LLLM_HOME: home } });
    expect((JSON.parse(listed.stdout) as { runs: Array<{ status: string }> }).runs.map((run) => run.status)).toEqual(["interrupted"]);
  });

  it("a tool that needs approval puts the task in input-required; the client's yes runs it and the same run answers", async () => {
    answer = priceModel;
    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    const client = await clientOf(serving.url);
    const asked = (await send(client, userMessage("Figs?", { metadata: { skill: "careful" } }), serving.token!)) as Task;
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(asked.status?.message?.parts)).toBe('The tool lookup_price needs your approval to run with {"item":"fig"}. Answer yes to run it, or no to refuse it.');
    const modelCalls = mock.requests.length;
    const done = (await send(client, userMessage("yes", { taskId: asked.id, contextId: asked.contextId }), serving.token!)) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(done.artifacts[0]?.parts)).toBe("It costs: fig: 3 EUR");
    // The same run went on: one more model call (the answer after the tool), not a new run from the start.
    expect(mock.requests.length).toBe(modelCalls + 1);

    // A no refuses the call: the model reads the refusal.
    answer = (body) => (lastOf(body).role === "tool" ? `Told: ${lastOf(body).content}` : { tool_calls: [{ name: "lookup_price", arguments: { item: "fig" } }] });
    const again = (await send(client, userMessage("Figs?", { metadata: { skill: "careful" } }), serving.token!)) as Task;
    const refused = (await send(client, userMessage("no", { taskId: again.id, contextId: again.contextId }), serving.token!)) as Task;
    expect(refused.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(refused.artifacts[0]?.parts)).toMatch(/^Told: .*refused/);
  });

  it("answers A2A 0.3's JSON-RPC (message/send, tasks/get) to a client without the A2A-Version header", async () => {
    answer = () => "Plain answer.";
    serving = await startServeCli([shop], { env: { LLLM_HOME: home } });
    const rpc = async (method: string, params: unknown): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> =>
      (await (await fetch(`${serving!.url}/a2a`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${serving!.token}` }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })).json()) as never;
    const sent = await rpc("message/send", { message: { kind: "message", messageId: "m1", role: "user", parts: [{ kind: "text", text: "Hello" }], metadata: { skill: "shop" } } });
    expect(sent.result).toMatchObject({ kind: "task", status: { state: "completed" }, artifacts: [{ name: "answer", parts: [{ kind: "text", text: "Plain answer." }] }] });
    const got = await rpc("tasks/get", { id: sent.result!.id });
    expect(got.result).toMatchObject({ id: sent.result!.id, status: { state: "completed" } });
    const unknown = await rpc("tasks/get", { id: "nope" });
    expect(unknown.error).toMatchObject({ code: -32001 });
  });
});
