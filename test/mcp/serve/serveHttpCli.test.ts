import { request as httpRequest } from "node:http";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateMessageRequestSchema, GetPromptResultSchema, ElicitRequestSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServeHttp, type ServingCli } from "../../helpers/mcpServeHttp.js";
import { ROOT } from "../../helpers/paths.js";
import { waitUntil } from "../../helpers/waitUntil.js";
import { runCli } from "../../helpers/runCli.js";

/** `lllm mcp serve DIR --http` as a user runs it, held to what an MCP client notices (the conformance fixture). */

const FIXTURE = path.join(ROOT, "test/fixtures/mcp-conformance");
const TOKEN = "s3cret-token-for-the-test";

/** One raw HTTP request (node:http, so that Host can be anything). */
function post(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } }, (response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => (text += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text, headers: response.headers }));
    });
    request.once("error", reject);
    request.end(body);
  });
}

const INITIALIZE = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });

async function connect(url: string, options: { token?: string; capabilities?: Record<string, unknown> } = {}): Promise<Client> {
  const client = new Client({ name: "test", version: "1" }, { capabilities: options.capabilities ?? {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), options.token ? { requestInit: { headers: { Authorization: `Bearer ${options.token}` } } } : {}));
  return client;
}

describe("lllm mcp serve --http with --token-env", () => {
  let serving: ServingCli;
  beforeAll(async () => {
    serving = await startMcpServeHttp(FIXTURE, { args: ["--token-env", "MCP_TOKEN"], env: { MCP_TOKEN: TOKEN } });
  }, 90_000);
  afterAll(() => serving?.cli.killTree());

  it("names the endpoint and the token's variable on stderr, never the token", () => {
    expect(serving.cli.stderr()).toMatch(/^lllm: serving 14 tools, 4 prompts, 4 resources of package `conformance` at http:\/\/127\.0\.0\.1:\d+\/mcp \(bearer token from \$MCP_TOKEN\)/m);
    expect(serving.cli.stderr()).not.toContain(TOKEN);
  });

  it("answers 401 without the token or with a wrong one, and serves with it", async () => {
    const without = await post(serving.url, INITIALIZE);
    expect(without.status).toBe(401);
    expect(without.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect((await post(serving.url, INITIALIZE, { authorization: "Bearer wrong" })).status).toBe(401);
    const client = await connect(serving.url, { token: TOKEN });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("test_simple_text");
    await client.close();
  });

  it("refuses a foreign Host or Origin with 403 (DNS rebinding), even with the token", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const host = await post(serving.url, INITIALIZE, { ...auth, host: "evil.example:80" });
    expect(host.status).toBe(403);
    expect(host.text).toContain("Invalid Host: evil.example:80");
    const origin = await post(serving.url, INITIALIZE, { ...auth, origin: "http://evil.example" });
    expect(origin.status).toBe(403);
    expect(origin.text).toContain("Invalid Origin");
    expect((await post(serving.url, INITIALIZE, { ...auth, origin: "http://localhost:3000" })).status).toBe(200);
  });

  it("answers a malformed body with a parse error (400) and an unknown session with 404, and goes on serving", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const huge = await post(serving.url, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(11 * 1024 * 1024) } }), auth);
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.text)).toMatchObject({ error: { code: -32600 } });
    const broken = await post(serving.url, "{not json", auth);
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.text)).toMatchObject({ error: { code: -32700 } });
    expect((await post(serving.url, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }), { ...auth, "mcp-session-id": "no-such-session" })).status).toBe(404);
    const client = await connect(serving.url, { token: TOKEN });
    expect(await client.ping()).toEqual({});
    await client.close();
  }, 60_000);
});

describe("lllm mcp serve --http on 127.0.0.1 without --token-env", () => {
  let serving: ServingCli;
  beforeAll(async () => {
    serving = await startMcpServeHttp(FIXTURE);
  }, 90_000);
  afterAll(() => serving?.cli.killTree());

  it("makes a token and prints it with the address; other local users without it get 401", async () => {
    expect(serving.cli.stderr()).toMatch(/^lllm: serving 14 tools, 4 prompts, 4 resources of package `conformance` at http:\/\/127\.0\.0\.1:\d+\/mcp \(/m);
    expect(serving.cli.stderr()).toMatch(/^lllm: clients must send the header `Authorization: Bearer [\w-]{43}` \(a token made for this session/m);
    const without = await post(serving.url, INITIALIZE);
    expect(without.status).toBe(401);
    expect((await post(serving.url, INITIALIZE, { authorization: "Bearer guessed" })).status).toBe(401);
    const client = await connect(serving.url, { token: serving.token! });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("test_simple_text");
    await client.close();
  });
});

describe("lllm mcp serve --http --no-auth", { timeout: 120_000 }, () => {
  it("serves on loopback without a token, and says that any local user can call the tools", async () => {
    const serving = await startMcpServeHttp(FIXTURE, { args: ["--no-auth"] });
    try {
      expect(serving.token).toBeUndefined();
      expect(serving.cli.stderr()).toContain("lllm: warning: serving with --no-auth: any user of this machine can call these tools and tactics");
      expect((await post(serving.url, INITIALIZE)).status).toBe(200);
    } finally {
      serving.cli.killTree();
    }
  });

  it("is refused beyond this machine, with --token-env, and without --http", async () => {
    const wide = await runCli(["mcp", "serve", FIXTURE, "--http", "0.0.0.0:0", "--no-auth"]);
    expect(wide.code, wide.stderr).toBe(2);
    expect(wide.stderr).toContain("--no-auth serves on this machine only, not on 0.0.0.0");
    const both = await runCli(["mcp", "serve", FIXTURE, "--http", "127.0.0.1:0", "--no-auth", "--token-env", "MCP_TOKEN"], { env: { MCP_TOKEN: TOKEN } });
    expect(both.code, both.stderr).toBe(2);
    expect(both.stderr).toContain("--no-auth and --token-env contradict each other");
    const stdio = await runCli(["mcp", "serve", FIXTURE, "--no-auth"]);
    expect(stdio.code, stdio.stderr).toBe(2);
    expect(stdio.stderr).toContain("--no-auth applies to --http only");
  });
});

describe("what a client gets from `lllm mcp serve --http`", () => {
  let serving: ServingCli;
  let client: Client;
  beforeAll(async () => {
    serving = await startMcpServeHttp(FIXTURE, { args: ["--no-auth"] });
    client = await connect(serving.url, { capabilities: { sampling: {}, elicitation: { form: {} } } });
  }, 90_000);
  afterAll(async () => {
    await client?.close();
    serving?.cli.killTree();
  });

  it("lists schemas as the author wrote them, with annotations", async () => {
    const { tools } = await client.listTools();
    const schema = tools.find((tool) => tool.name === "json_schema_2020_12_tool")!.inputSchema;
    expect(schema).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    });
    expect(schema).not.toHaveProperty("required");
    expect(tools.find((tool) => tool.name === "test_image_content")!.annotations).toEqual({ readOnlyHint: true });
  });

  it("answers an unknown tool and malformed params with JSON-RPC -32602, not a tool result", async () => {
    await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("Unknown tool: no_such_tool") });
    await expect(client.request({ method: "tools/call", params: { arguments: {} } } as never, CallToolResultSchema)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("Invalid") });
    await expect(client.request({ method: "prompts/get", params: { name: 42 } } as never, GetPromptResultSchema)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("name") });
    await expect(client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "x" } })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("arg2") });
  });

  it("sends rich results as content blocks", async () => {
    const result = await client.callTool({ name: "test_multiple_content_types", arguments: {} });
    expect((result.content as Array<{ type: string }>).map((block) => block.type)).toEqual(["text", "image", "resource"]);
    expect((result.content as Array<{ mimeType?: string }>)[1]!.mimeType).toBe("image/png");
  });

  it("sends progress only to a caller that asked, and tool logs at or above the level set", async () => {
    const progress: Array<[number, number | undefined, string | undefined]> = [];
    await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, { onprogress: (update) => void progress.push([update.progress, update.total, update.message]) });
    expect(progress).toEqual([[0, 100, "Starting"], [50, 100, "Halfway"], [100, 100, "Done"]]);

    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params));
    await client.setLoggingLevel("warning");
    await client.callTool({ name: "test_tool_with_logging", arguments: {} });
    await client.setLoggingLevel("info");
    await client.callTool({ name: "test_tool_with_logging", arguments: {} });
    expect(logs).toEqual([
      { level: "info", logger: "test_tool_with_logging", data: "Tool execution started" },
      { level: "info", logger: "test_tool_with_logging", data: "Tool processing data" },
      { level: "info", logger: "test_tool_with_logging", data: "Tool execution completed" },
    ]);
  });

  it("asks the client's model (sampling) and the client's user (elicitation) for a tool", async () => {
    client.setRequestHandler(CreateMessageRequestSchema, (request) => ({ role: "assistant", content: { type: "text", text: `echo ${(request.params.messages[0]!.content as { text: string }).text}` }, model: "client-model" }));
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { username: "ada", email: "ada@example.com" } }));
    expect(await client.callTool({ name: "test_sampling", arguments: { prompt: "hi" } })).toEqual({ content: [{ type: "text", text: "LLM response: echo hi" }] });
    expect(await client.callTool({ name: "test_elicitation", arguments: { message: "who?" } })).toEqual({ content: [{ type: "text", text: 'User response: action=accept, content={"username":"ada","email":"ada@example.com"}' }] });
  });

  it("serves prompts with their arguments, completions, and resources with templates", async () => {
    expect((await client.listPrompts()).prompts.find((prompt) => prompt.name === "test_prompt_with_arguments")).toEqual({
      name: "test_prompt_with_arguments",
      title: "Prompt With Arguments",
      description: "A prompt with required arguments",
      arguments: [{ name: "arg1", description: "First test argument", required: true }, { name: "arg2", description: "Second test argument", required: true }],
    });
    expect((await client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "a", arg2: "b" } })).messages).toEqual([{ role: "user", content: { type: "text", text: "Prompt with arguments: arg1='a', arg2='b'" } }]);
    expect((await client.complete({ ref: { type: "ref/prompt", name: "test_prompt_with_arguments" }, argument: { name: "arg1", value: "PAR" } })).completion.values).toEqual(["paris", "park", "party"]);
    expect((await client.complete({ ref: { type: "ref/resource", uri: "test://template/{id}/data" }, argument: { name: "id", value: "4" } })).completion.values).toEqual(["456"]);
    expect((await client.listResources()).resources.map((resource) => resource.uri)).toEqual(expect.arrayContaining(["test://static-text", "test://static-binary"]));
    expect((await client.readResource({ uri: "test://template/42/data" })).contents).toEqual([{ uri: "test://template/42/data", mimeType: "application/json", text: JSON.stringify({ id: "42", templateTest: true, data: "Data for ID: 42" }) }]);
    await expect(client.readResource({ uri: "test://nothing" })).rejects.toMatchObject({ code: -32002 });
  });

  it("goes on serving when a client vanishes in the middle of a call", async () => {
    const leaving = new Client({ name: "leaving", version: "1" }, { capabilities: { elicitation: { form: {} } } });
    let asked!: () => void;
    const elicited = new Promise<void>((resolve) => (asked = resolve));
    leaving.setRequestHandler(ElicitRequestSchema, () => {
      asked();
      return new Promise<never>(() => undefined); // the user never answers: the client goes away instead
    });
    await leaving.connect(new StreamableHTTPClientTransport(new URL(serving.url)));
    const call = leaving.callTool({ name: "test_elicitation", arguments: { message: "still there?" } }).catch((error: unknown) => error);
    await elicited;
    await leaving.close();
    expect(await call).toBeInstanceOf(Error);
    const other = await connect(serving.url);
    expect(await other.callTool({ name: "test_simple_text", arguments: {} })).toEqual({ content: [{ type: "text", text: "This is a simple text response for testing." }] });
    await other.close();
    expect(await serving.cli.exit(100)).toBe("still running");
  });

  it("stops on SIGTERM: the sessions end and the process exits", async () => {
    process.kill(serving.cli.pid, "SIGTERM");
    expect(await serving.cli.exit(30_000)).toBe(143);
  });
});

/** Ask `probe` again until it holds or `ms` pass (for conditions only a request can see); returns whether it held. */
async function eventually(probe: () => Promise<boolean>, ms = 60_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await probe()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return probe();
}

describe("lllm mcp serve --http keeps a bounded number of sessions", () => {
  it("refuses a session past --max-sessions with 503 and a JSON-RPC error the SDK client shows, and takes one again once a session ends", async () => {
    const serving = await startMcpServeHttp(FIXTURE, { args: ["--no-auth", "--max-sessions", "2"] });
    const clients: Client[] = [];
    try {
      const first = new StreamableHTTPClientTransport(new URL(serving.url));
      clients.push(new Client({ name: "first", version: "1" }));
      await clients[0]!.connect(first);
      clients.push(await connect(serving.url));
      const third = new Client({ name: "third", version: "1" });
      clients.push(third);
      const refused = await third.connect(new StreamableHTTPClientTransport(new URL(serving.url))).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(StreamableHTTPError);
      expect((refused as StreamableHTTPError).code).toBe(503);
      const body = JSON.parse((refused as Error).message.replace(/^.*?Error POSTing to endpoint: /s, "")) as { error: { code: number; message: string } };
      expect(body.error).toEqual({ code: -32000, message: "Service Unavailable: 2 sessions are open, the most this server keeps; retry later, or end a session (DELETE) first" });
      const refusal = "lllm: 2 MCP sessions are open, the most kept (--max-sessions); new ones are refused (503) until one ends";
      await waitUntil(() => serving.cli.stderr().includes(refusal));
      expect(serving.cli.stderr()).toContain(refusal);
      // The two open sessions still work.
      expect(await clients[1]!.ping()).toEqual({});

      await first.terminateSession();
      await clients[0]!.close();
      const again = await connect(serving.url);
      clients.push(again);
      expect(await again.callTool({ name: "test_simple_text", arguments: {} })).toEqual({ content: [{ type: "text", text: "This is a simple text response for testing." }] });
    } finally {
      await Promise.allSettled(clients.map((client) => client.close()));
      serving.cli.killTree();
    }
  }, 120_000);

  it("closes a session left idle for --idle-timeout, so a client that vanished holds no place", async () => {
    // 5 s, not 1: the refusal below must come before the idle session is closed, and on a busy machine a second can
    // pass between two requests.
    const serving = await startMcpServeHttp(FIXTURE, { args: ["--no-auth", "--max-sessions", "1", "--idle-timeout", "5"] });
    try {
      // A client that initializes, then goes away without DELETE (and without a stream open).
      const vanished = await post(serving.url, INITIALIZE);
      expect(vanished.status).toBe(200);
      const sessionId = vanished.headers["mcp-session-id"] as string;
      expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
      // The one place is taken until the idle session is closed; asking for a new session does not touch it.
      const refused = await post(serving.url, INITIALIZE);
      expect(refused.status).toBe(503);
      // One session, in the singular.
      expect(refused.text).toContain("Service Unavailable: 1 session is open, the most this server keeps");
      await waitUntil(() => serving.cli.stderr().includes("lllm: 1 MCP session is open, the most kept (--max-sessions)"));
      expect(serving.cli.stderr()).toContain("lllm: 1 MCP session is open, the most kept (--max-sessions)");
      let next: Awaited<ReturnType<typeof post>> | undefined;
      expect(await eventually(async () => (next = await post(serving.url, INITIALIZE)).status === 200)).toBe(true);
      const ping = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" });
      expect((await post(serving.url, ping, { "mcp-session-id": sessionId })).status).toBe(404);
      expect(next!.headers["mcp-session-id"]).toMatch(/^[0-9a-f-]{36}$/);
      expect(next!.headers["mcp-session-id"]).not.toBe(sessionId);
    } finally {
      serving.cli.killTree();
    }
  }, 120_000);

  it("keeps a session whose client holds a stream open, however long it stays quiet", async () => {
    // 3 s: the client opens its GET stream just after it connects, and a busy machine must not make that gap look idle.
    const serving = await startMcpServeHttp(FIXTURE, { args: ["--no-auth", "--max-sessions", "1", "--idle-timeout", "3"] });
    const client = new Client({ name: "quiet", version: "1" });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(serving.url)));
      // While its GET stream is open, the one place stays taken: new sessions are refused, for twice the idle timeout
      // (a slow machine only makes the wait longer); then the quiet client still works.
      for (let attempt = 0; attempt < 3; attempt++) {
        expect((await post(serving.url, INITIALIZE)).status).toBe(503);
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
      expect(await client.ping()).toEqual({});
    } finally {
      await client.close();
      serving.cli.killTree();
    }
  }, 120_000);
});

// Each case spawns the CLI two to four times: 8-9 s on a loaded machine, against the default 30 s.
describe("lllm mcp serve --http: usage errors", { timeout: 120_000 }, () => {
  it("needs the token's variable to be set", async () => {
    const result = await runCli(["mcp", "serve", FIXTURE, "--http", "127.0.0.1:0", "--token-env", "NO_SUCH_VARIABLE_SET"]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("the variable `NO_SUCH_VARIABLE_SET` is not set");
  });

  it("takes --max-sessions and --idle-timeout as whole numbers, with --http only", async () => {
    const zero = await runCli(["mcp", "serve", FIXTURE, "--http", "127.0.0.1:0", "--max-sessions", "0"]);
    expect(zero.code, zero.stderr).toBe(2);
    expect(zero.stderr).toContain("--max-sessions must be a whole number >= 1 (got `0`)");
    const words = await runCli(["mcp", "serve", FIXTURE, "--http", "127.0.0.1:0", "--idle-timeout", "soon"]);
    expect(words.code, words.stderr).toBe(2);
    expect(words.stderr).toContain("--idle-timeout must be a whole number >= 1 (got `soon`)");
    const stdio = await runCli(["mcp", "serve", FIXTURE, "--max-sessions", "5"]);
    expect(stdio.code, stdio.stderr).toBe(2);
    expect(stdio.stderr).toContain("--max-sessions applies to --http only");
  });

  it("refuses every interface without a token, and a malformed address", async () => {
    const open = await runCli(["mcp", "serve", FIXTURE, "--http", "0.0.0.0:0"]);
    expect(open.code, open.stderr).toBe(2);
    expect(open.stderr).toContain("needs a token");
    const bad = await runCli(["mcp", "serve", FIXTURE, "--http", "localhost:port"]);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toContain("is not [HOST:]PORT");
  });

  it("refuses any address but loopback without a token (a LAN address reaches other machines), before listening", async () => {
    // The refusal comes before listening, so the address need not be this machine's.
    for (const host of ["192.168.1.5", "10.0.0.7", "[fe80::1]", "my-host.example"]) {
      const result = await runCli(["mcp", "serve", FIXTURE, "--http", `${host}:0`]);
      expect(result.code, host).toBe(2);
      expect(result.stderr, host).toContain(`serving on ${host} needs a token`);
      expect(result.stderr, host).toContain("serving beyond this machine needs a token (--token-env NAME");
      expect(result.stderr, host).not.toContain("lllm: serving");
    }
  });
});
