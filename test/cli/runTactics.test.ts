import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type ScriptedTurn } from "../../src/testing/index.js";
import { ROOT, runCli, type CliResult } from "../helpers/runCli.js";

// Each case spawns the CLI, some several times: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
});

const desk = path.join(ROOT, "packages-example/weather/tactics/desk.yaml");
type Wire = { role: string; content: string };

async function run(args: string[], script: ScriptedTurn[]): Promise<CliResult> {
  server = await startMockOpenAIServer({ script });
  return runCli(args, { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
}
const posts = () => server!.requests.filter((request) => request.method === "POST");
const systemOf = (index: number) => (posts()[index]!.body.messages as Wire[])[0]!.content;

describe("tactics as tools", () => {
  it("a tactic written in code runs as a tool inside another tactic's run, with fresh agents", async () => {
    const result = await run(["run", desk, "--input", "Write the page for Paris", "--json"], [
      { tool_calls: [{ name: "briefing", arguments: { city: "Paris" } }] },
      { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
      "Paris: sunny, 22 degrees.",
      "Today: Paris: sunny, 22 degrees.",
    ]);
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { output: string; usage: { llm_calls: number }; tool_calls: Array<{ agent: string; name: string; result: unknown }> };
    expect(report.output).toBe("Today: Paris: sunny, 22 degrees.");
    expect(report.usage.llm_calls).toBe(4);
    expect(report.tool_calls.map((call) => [call.agent, call.name])).toEqual([
      // The code tactic's agent, named under the tool that ran it, as in usage.by_agent.
      ["briefing/reporter", "get_weather"],
      ["editor", "briefing"],
    ]);
    expect([0, 1, 2, 3].map(systemOf).map((text) => text.split(".")[0])).toEqual(["You edit the weather page", "You write short weather briefings", "You write short weather briefings", "You edit the weather page"]);
    const offered = (posts()[0]!.body.tools as Array<{ function: { name: string; parameters: { required: string[] } } }>).map((tool) => [tool.function.name, tool.function.parameters.required]);
    expect(offered).toEqual([
      ["briefing", ["city"]],
      ["headline", ["city"]],
    ]);
    expect((posts()[1]!.body.messages as Wire[])[1]!.content).toBe("Write a plain weather briefing for Paris in two sentences.");
    expect((posts()[3]!.body.messages as Wire[]).at(-1)!.content).toContain("Paris: sunny, 22 degrees.");
  });

  it("invalid input goes back to the model as an error; the tactic never runs", async () => {
    const result = await run(["run", desk, "--input", "Page?"], [{ tool_calls: [{ name: "briefing", arguments: { style: "cheerful" } }] }, "I need a city."]);
    expect(result).toMatchObject({ code: 0, stdout: "I need a city.\n" });
    expect(posts()).toHaveLength(2);
    expect((posts()[1]!.body.messages as Wire[]).at(-1)!.content).toMatch(/^Error: Invalid arguments for briefing: .*city/);
  });

  it("pkg.tactics:name#tool picks one of a tactic's tools", async () => {
    const result = await run(["run", desk, "--input", "Headline for Oslo"], [{ tool_calls: [{ name: "headline", arguments: { city: "Oslo" } }] }, "Oslo: clear skies ahead.", "Headline: Oslo: clear skies ahead."]);
    expect(result).toMatchObject({ code: 0, stdout: "Headline: Oslo: clear skies ahead.\n" });
    expect((posts()[1]!.body.messages as Wire[]).at(-1)!.content).toBe("Write a one-line weather headline for Oslo.");
  });

  it("lllm run pkg.tactics:name runs a code tactic on its own, with JSON input checked against its schema", async () => {
    const result = await run(["run", "weather.tactics:briefing", "-p", "packages-example/weather", "--input", '{"city": "Rome", "style": "cheerful"}'], ["Rome is glorious today!"]);
    expect(result).toMatchObject({ code: 0, stdout: "Rome is glorious today!\n" });
    expect((posts()[0]!.body.messages as Wire[])[1]!.content).toBe("Write a cheerful weather briefing for Rome in two sentences.");
    const bad = await runCli(["run", "weather.tactics:briefing", "-p", "packages-example/weather", "--input", '{"style": "x"}'], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server!.url } });
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toContain("city");
  });
});

describe("lllm tools show|call with a tactic ref", () => {
  it("shows a tactic as the tool an agent would get, and calls it", async () => {
    const shown = await runCli(["tools", "show", "weather.tactics:briefing", "-p", "packages-example/weather"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect((JSON.parse(shown.stdout) as { function: { name: string; parameters: { required: string[] } } }).function).toMatchObject({ name: "briefing", parameters: { required: ["city"] } });
    const result = await run(["tools", "call", "weather.tactics:briefing#headline", "-p", "packages-example/weather", "--args", '{"city": "Bergen"}', "--json"], ["Bergen: rain, as ever."]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ schema_version: 1, result: "Bergen: rain, as ever." });
  });
});

describe("lllm mcp serve: a package's tools and tactics for any MCP client", () => {
  it("lists the tactics beside the tools, and a call runs the tactic with the server's model", async () => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const { BIN, emptyHome } = await import("../helpers/runCli.js");
    server = await startMockOpenAIServer({ script: [{ tool_calls: [{ name: "get_weather", arguments: { city: "Lima" } }] }, "Lima: sunny, 22 degrees."] });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "serve", path.join(ROOT, "packages-example/weather")],
      env: { PATH: process.env.PATH ?? "", TMPDIR: process.env.TMPDIR ?? "", LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE ?? "", OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: emptyHome(), NO_COLOR: "1" },
      stderr: "pipe",
    });
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(["get_weather", "divide", "briefing", "desk", "weather"]));
      const briefing = tools.find((tool) => tool.name === "briefing")!;
      expect(briefing.inputSchema.required).toEqual(["city"]);
      const result = (await client.callTool({ name: "briefing", arguments: { city: "Lima" } })) as { content: Array<{ text: string }>; isError?: boolean };
      expect(result.isError ?? false).toBe(false);
      expect(result.content[0]!.text).toBe("Lima: sunny, 22 degrees.");
    } finally {
      await client.close();
    }
  });
});
