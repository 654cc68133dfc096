import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, ToolError } from "../../src/errors.js";
import { McpConnections, type McpClientHooks } from "../../src/mcp/index.js";
import { mcpSamplingHook } from "../../src/tactics/mcpSamplingHook.js";
import { ScriptedModel } from "../../src/testing/index.js";
import { freePort } from "../helpers/freePort.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { startHttpFixture, type HttpFixture } from "./fixtures/httpServer.js";
import { EVERYTHING, nodeServer } from "./helpers.js";

/** Tool results as the model reads them: the text of each call. */
async function call(connections: McpConnections, config: Parameters<McpConnections["get"]>[0], tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const tools = await connections.get(config);
  const found = tools.find((candidate) => candidate.name === tool);
  if (!found) throw new Error(`no tool ${tool} among ${tools.map((candidate) => candidate.name).join(", ")}`);
  const result = await found.run!(args, {});
  return typeof result === "string" ? result : JSON.stringify(result);
}

describe("a bearer token from the environment", () => {
  let fixture: HttpFixture;
  beforeAll(async () => {
    fixture = await startHttpFixture();
  });
  afterAll(() => fixture.close());

  it("is sent as Authorization: Bearer, read from the variable bearer_token_env names", async () => {
    const connections = new McpConnections({ hooks: { env: { REMOTE_TOKEN: "tok-31337" } } });
    try {
      expect(await call(connections, { name: "remote", url: fixture.url, bearer_token_env: "REMOTE_TOKEN" }, "whoami")).toBe("Bearer tok-31337");
    } finally {
      await connections.closeAll();
    }
  });

  it("is a configuration error naming the variable when it is not set", async () => {
    const connections = new McpConnections({ hooks: { env: {} } });
    const error = await connections.get({ name: "remote", url: fixture.url, bearer_token_env: "REMOTE_TOKEN" }).catch((caught: unknown) => caught);
    await connections.closeAll();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe("mcp_token_missing");
    expect((error as ConfigError).message).toBe("MCP server `remote`: the environment variable `REMOTE_TOKEN` (bearer_token_env) is not set");
  });
});

describe("the npm server-everything over HTTP+SSE (the 2024 transport)", () => {
  let server: ChildProcess;
  let url: string;
  beforeAll(async () => {
    const port = await freePort();
    let output = "";
    server = spawn(process.execPath, [EVERYTHING, "sse"], { env: { PATH: process.env.PATH, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] });
    server.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    server.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    expect(await waitUntil(() => /running on port/i.test(output), 30_000), output).toBe(true);
    url = `http://127.0.0.1:${port}/sse`;
  }, 40_000);
  afterAll(() => {
    server.kill("SIGKILL");
  });

  it("is reached with transport: auto after the Streamable HTTP attempt is refused, and with transport: sse", async () => {
    for (const transport of [undefined, "sse"] as const) {
      const connections = new McpConnections();
      try {
        expect(await call(connections, { name: "everything", url, ...(transport ? { transport } : {}) }, "echo", { message: "over sse" })).toBe("Echo: over sse");
        expect(connections.connections[0]!.transportKind).toBe("sse");
      } finally {
        await connections.closeAll();
      }
    }
  });

  it("is not tried over SSE with transport: streamable-http", async () => {
    const connections = new McpConnections({ startTimeoutMs: 10_000 });
    const error = await connections.get({ name: "everything", url, transport: "streamable-http" }).catch((caught: unknown) => caught);
    await connections.closeAll();
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).message).toMatch(/^MCP server `everything` \(http:\/\/127\.0\.0\.1:\d+\/sse\) failed to start: the server answered HTTP 404 to the first POST$/);
  });
});

describe("what the npm server-everything asks of its client", () => {
  const everything = nodeServer("everything", EVERYTHING);

  it("sampling is answered by the agent's model, up to sampling.max_requests per run", async () => {
    const model = new ScriptedModel(["The sky is blue because of Rayleigh scattering."]);
    const sample = mcpSamplingHook(model, { agent: "sampler" });
    const connections = new McpConnections({ hooks: { sample: (request) => sample(request) } });
    try {
      const config = { ...everything, sampling: { max_requests: 1 } };
      const text = await call(connections, config, "trigger-sampling-request", { prompt: "Why is the sky blue?", maxTokens: 50 });
      expect(text).toContain("Rayleigh scattering");
      expect(model.requests[0]!.messages).toEqual([
        { role: "system", content: "You are a helpful test server." },
        { role: "user", content: "Resource trigger-sampling-request context: Why is the sky blue?" },
      ]);
      expect(model.requests[0]!.modelArgs).toEqual({ max_tokens: 50, temperature: 0.7 });
      const refused = await call(connections, config, "trigger-sampling-request", { prompt: "again" }).catch((caught: unknown) => caught);
      expect(String((refused as Error).message ?? refused)).toContain("sampling refused: this run answers at most 1 sampling requests of server `everything`");
    } finally {
      await connections.closeAll();
    }
  });

  it("a question is answered by the elicit hook (defaults filled in), and declined with elicitation: decline", async () => {
    const asked: string[] = [];
    const hooks: McpClientHooks = {
      elicit: async (request) => {
        asked.push(`${request.server}: ${request.message}`);
        return { action: "accept", content: { name: "Ada Lovelace" } };
      },
    };
    const connections = new McpConnections({ hooks });
    try {
      const answer = await call(connections, everything, "trigger-elicitation-request");
      expect(asked).toEqual(["everything: Please provide inputs for the following fields:"]);
      expect(answer).toContain("Ada Lovelace");
      expect(answer).toContain("It was a dark and stormy night."); // the default of a field left out
      const declined = await call(connections, { ...everything, name: "everything-declines", elicitation: "decline" }, "trigger-elicitation-request");
      expect(declined).toContain("declined");
      expect(asked).toHaveLength(1);
    } finally {
      await connections.closeAll();
    }
  });

  it("without an elicit hook (no terminal) a question is declined", async () => {
    const connections = new McpConnections();
    try {
      expect(await call(connections, everything, "trigger-elicitation-request")).toContain("declined");
    } finally {
      await connections.closeAll();
    }
  });

  it("roots are the ones lllm offers; progress and log messages reach their hooks", async () => {
    const progress: string[] = [];
    const logs: string[] = [];
    const connections = new McpConnections({
      hooks: {
        roots: [{ uri: "file:///work/project", name: "project" }],
        onProgress: (entry) => progress.push(`${entry.server}.${entry.tool} ${entry.progress}/${entry.total}`),
        onLog: (entry) => logs.push(`${entry.server} ${entry.level}`),
      },
    });
    try {
      expect(await call(connections, everything, "get-roots-list")).toContain("file:///work/project");
      await call(connections, everything, "trigger-long-running-operation", { duration: 0.2, steps: 2 });
      // The last step's notification may cross the result (the SDK drops progress once the call is answered).
      expect(progress[0]).toBe("everything.trigger-long-running-operation 1/2");
      await call(connections, everything, "toggle-simulated-logging");
      expect(await waitUntil(() => logs.length > 0, 30_000)).toBe(true);
      expect(logs[0]).toMatch(/^everything (debug|info|notice|warning|error|critical|alert|emergency)$/);
    } finally {
      await connections.closeAll();
    }
  }, 60_000);
});
