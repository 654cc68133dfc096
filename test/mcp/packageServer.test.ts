import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { mcpServeCommand } from "../../src/cli/mcp.js";
import { createPackageServer, McpConnections } from "../../src/mcp/index.js";
import { Registry } from "../../src/registry/index.js";
import { tacticAsFunction } from "../../src/tactics/tacticAsFunction.js";
import { FunctionCall, type FunctionTool } from "../../src/tools/index.js";
import { BIN, emptyHome } from "../helpers/runCli.js";
import { JITI } from "./helpers.js";

const WEATHER = fileURLToPath(new URL("../../packages-example/weather", import.meta.url));
let registryForNames: Registry | undefined;
function registryTool(name: string): FunctionTool {
  return registryForNames!.resolveTool(`weather.tools:${name}`).tool;
}

describe("createPackageServer over InMemoryTransport", () => {
  let registry: Registry;
  let client: Client;
  beforeAll(async () => {
    registry = await Registry.load({ packages: [WEATHER], discover: false });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const report = tacticAsFunction({ name: "weather_report", description: "Write a weather report", call: async (input) => `Report: ${String(input)}` });
    const stats = tacticAsFunction({ name: "weather_stats", description: "Statistics", call: async () => ({ high: 20, low: 11 }) });
    await (await createPackageServer(registry, "weather", { extraTools: [report, stats] })).connect(serverSide);
    client = new Client({ name: "test", version: "1" });
    await client.connect(clientSide);
  });
  afterAll(() => client.close());

  it("lists every tool of the package with its schema as written, and the extra tools", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["divide", "draw", "forecast", "get_weather", "to_fahrenheit", "weather_brief", "web_search", "weather_report", "weather_stats"]);
    for (const listed of tools) {
      const own = listed.name.startsWith("weather_") && listed.name !== "weather_brief" ? undefined : registry.resolveTool(`weather.tools:${listed.name}`).tool;
      if (own) {
        expect(listed.inputSchema).toEqual(own.publishedSchema);
        expect(listed.description).toBe(own.description);
      }
    }
    const draw = tools.find((tool) => tool.name === "draw")!;
    expect(draw.inputSchema.required).toEqual(["points", "color"]);
    expect(tools.find((tool) => tool.name === "web_search")!.inputSchema).toEqual({ type: "object", properties: { query: { type: "string", description: "Search query" } }, required: ["query"], additionalProperties: false });
  });

  it("calls a tool: the raw result as text", async () => {
    const result = await client.callTool({ name: "get_weather", arguments: { city: "Paris" } });
    expect(result).toEqual({ content: [{ type: "text", text: "Sunny, 22 degrees celsius in Paris" }] });
  });

  it("calls a declaration bound to its implementation in a dependency", async () => {
    const result = await client.callTool({ name: "web_search", arguments: { query: "lllm" } });
    expect(result.isError).toBeUndefined();
    expect(result.content).toEqual([{ type: "text", text: "Top results for 'lllm'" }]);
  });

  it("sends other results as JSON text, and a plain object as structuredContent too", async () => {
    // forecast is a python command tool printing a JSON list.
    expect(await client.callTool({ name: "forecast", arguments: { city: "Paris", days: 2 } })).toEqual({
      content: [{ type: "text", text: '[{"city":"Paris","day":1,"high":18,"low":10},{"city":"Paris","day":2,"high":19,"low":11}]' }],
    });
    expect(await client.callTool({ name: "weather_stats", arguments: { task: "Paris" } })).toEqual({ content: [{ type: "text", text: '{"high":20,"low":11}' }], structuredContent: { high: 20, low: 11 } });
  });

  it("makes a tool error and invalid arguments an isError result with the Error text", async () => {
    expect(await client.callTool({ name: "divide", arguments: { a: 1, b: 0 } })).toEqual({ content: [{ type: "text", text: "Error: Division by zero" }], isError: true });
    expect(await client.callTool({ name: "divide", arguments: { a: 1 } })).toEqual({ content: [{ type: "text", text: "Error: Invalid arguments for divide: missing required argument 'b' (number)" }], isError: true });
    // An unknown tool is not a result for the model: it is the client's mistake, a JSON-RPC invalid-params error.
    await expect(client.callTool({ name: "nope", arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/Unknown tool: nope; the tools are: divide, draw/) });
  });

  it("serves the package's prompts and its proxies' API docs as resources", async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(["system"]);
    const system = await client.getPrompt({ name: "system" });
    expect(system.messages).toEqual([{ role: "user", content: { type: "text", text: expect.stringContaining("You are a weather assistant.") } }]);
    const { resources } = await client.listResources();
    expect(resources.length).toBe(2);
    // The proxy's name says "API" already: its description does not say it twice.
    expect(resources.map((listed) => listed.description).sort()).toEqual([
      "The documentation of the Weather API (proxy `weather`): its endpoints and their parameters.",
      "The documentation of the Weather HTTP API (proxy `weather_api`): its endpoints and their parameters.",
    ]);
    for (const listed of resources) {
      expect(listed.uri).toMatch(/^lllm:\/\/weather\//);
      const { contents } = await client.readResource({ uri: listed.uri });
      expect(contents).toHaveLength(1);
      expect((contents[0] as { text?: string }).text?.length ?? 0).toBeGreaterThan(0);
    }
  });

  it("serves the extra tools (the seam for tactics as tools)", async () => {
    expect(await client.callTool({ name: "weather_report", arguments: { task: "Paris" } })).toEqual({ content: [{ type: "text", text: "Report: Paris" }] });
  });

});

describe("mcpServeCommand", () => {
  beforeAll(async () => {
    registryForNames = await Registry.load({ packages: [WEATHER], discover: false });
  });

  it("serves a package over a stdio pair until the client goes away", async () => {
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const serving = mcpServeCommand(WEATHER, { stdin: toServer, stdout: fromServer });
    // The client side of newline-delimited JSON over two streams: the SDK's stdio transport, mirrored.
    const client = new Client({ name: "test", version: "1" });
    await client.connect(new StdioServerTransport(fromServer, toServer));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("get_weather");
    expect(await client.callTool({ name: "to_fahrenheit", arguments: { celsius: 100 } })).toEqual({ content: [{ type: "text", text: "212" }] });
    toServer.end();
    await expect(serving).resolves.toBeUndefined();
    await client.close();
    expect(stderr.mock.calls.map(([text]) => String(text)).join("")).toBe("lllm: serving 11 tools, 1 prompt, 2 resources of package `weather` over stdio (divide, draw, forecast, get_weather, to_fahrenheit, weather_brief, web_search, analyst, briefing, desk, weather)\n");
    stderr.mockRestore();
  });

  it("rejects a folder that does not exist", async () => {
    await expect(mcpServeCommand("no/such/package")).rejects.toMatchObject({ code: "package_not_found" });
  });

  it("runs as a stdio server process that lllm's own client uses", async () => {
    // The server compiles lllm's sources through jiti as it starts: 24 s on a loaded machine, near the default 30 s.
    const connections = new McpConnections({ startTimeoutMs: 180_000 });
    try {
      // An MCP server gets the SDK's short list of variables and what `env` adds: without LLLM_HOME and the suite's code
      // cache, it would transpile the package into the developer's ~/.lllm (whenever that folder is there).
      const env = { LLLM_HOME: emptyHome(), LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE ?? "", TMPDIR: process.env.TMPDIR ?? "", NO_COLOR: "1" };
      const tools = await connections.get({ name: "weather", command: process.execPath, args: [JITI, fileURLToPath(new URL("./fixtures/serveRunner.ts", import.meta.url)), WEATHER], env });
      expect(tools.map((tool) => tool.name)).toEqual(["divide", "draw", "forecast", "get_weather", "to_fahrenheit", "weather_brief", "web_search", "analyst", "briefing", "desk", "weather"]);
      // The schemas survive the round trip: the model sees the package's tools exactly (tactics are tested elsewhere).
      for (const tool of tools.slice(0, 7)) expect(tool.toTool()).toEqual(registryTool(tool.name).toTool());
      const divide = tools.find((tool) => tool.name === "divide")!;
      expect(await divide.run!({ a: 1, b: 4 }, {})).toBe(0.25);
      const failed = await divide.call(new FunctionCall({ name: "divide", arguments: { a: 1, b: 0 } }));
      expect(failed.resultStr).toBe("Error: Division by zero");
    } finally {
      await connections.closeAll();
    }
  }, 240_000);

  it("is served by `lllm mcp serve`, and lllm's own client uses it", async () => {
    const connections = new McpConnections();
    try {
      const tools = await connections.get({ name: "weather", command: process.execPath, args: [BIN, "mcp", "serve", WEATHER], env: { LLLM_HOME: emptyHome(), NO_COLOR: "1" } });
      const divide = tools.find((tool) => tool.name === "divide")!;
      expect(await divide.run!({ a: 1, b: 4 }, {})).toBe(0.25);
      await expect(divide.run!({ a: 1, b: 0 }, {})).rejects.toMatchObject({ message: "Division by zero", mcpCode: "TOOL_ERROR" });
    } finally {
      await connections.closeAll();
    }
  });
});
