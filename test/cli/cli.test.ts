import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, EXAMPLE, ROOT, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";

const weather = path.join(EXAMPLE, "weather");
const tactic = "packages-example/weather/tactics/weather.yaml";

// Most cases run main(argv) in-process (runCliInProcess: fast); those with runCli spawn the built binary, end to
// end, at least one for each command.
describe("lllm CLI", () => {
  it("--help lists the commands on stdout, exit 0", async () => {
    const result = await runCliInProcess(["--help"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("Usage: lllm");
    for (const command of ["validate", "tools", "schema"]) expect(result.stdout).toContain(command);
  });

  it("--version prints the package version", async () => {
    const result = await runCliInProcess(["--version"]);
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string };
    expect(result).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
    // Input it never reads, more than a pipe holds: the command is gone before the rest is written (EPIPE), and the
    // helper still gives its result rather than an uncaught exception of the suite.
    const unread = await runCli(["--version"], { input: "x".repeat(8 * 1024 * 1024) });
    expect(unread).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
  });

  it("validate prints the agents, models and bound tools of the example", async () => {
    const result = await runCli(["validate", tactic]);
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      [
        "ok tactic weather (packages-example/weather/tactics/weather.yaml)",
        "  type: agent · base: packages-example/weather/tactics/common.yaml",
        "  packages: weather (packages-example/weather), search (packages-example/search)",
        "  agent weather_bot",
        "    model: gpt-4o-mini",
        "    system prompt: weather.prompts:system",
        "    tools: get_weather <- weather.tools:get_weather, to_fahrenheit <- weather.tools:to_fahrenheit",
        "  agent researcher",
        "    model: gpt-4o-mini",
        "    system prompt: inline",
        "    tools: web_search <- weather.tools:web_search, forecast <- weather.tools:forecast",
        "",
      ].join("\n"),
    );
  });

  it("validate --model overrides every agent's model, and --json is data", async () => {
    const result = await runCliInProcess(["validate", tactic, "--model", "ollama/llama3", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { agents: Array<{ name: string; model: string; tools: Array<{ ref: string }> }> };
    expect(summary.agents.map((agent) => [agent.name, agent.model])).toEqual([
      ["weather_bot", "ollama/llama3"],
      ["researcher", "ollama/llama3"],
    ]);
    expect(summary.agents[1]!.tools.map((tool) => tool.ref)).toEqual(["weather.tools:web_search", "weather.tools:forecast"]);
  });

  it("validate shows an agent's tool_chain with the tools its programs call, in the tools line and in --json", async () => {
    const chain = path.join(ROOT, "test/fixtures/codeaction/chain.yaml");
    const over = ["list_employees", "get_employee", "export_directory", "count_rows", "send_email", "delete_employee"];
    const text = await runCliInProcess(["validate", chain]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`, delete_employee <- employees.tools:delete_employee, tool_chain (programs over: ${over.join(", ")}; timeout 20 s, max_tool_calls 57)\n`);
    const json = await runCliInProcess(["validate", chain, "--json"]);
    expect((JSON.parse(json.stdout) as { agents: Array<{ tool_chain?: unknown }> }).agents[0]!.tool_chain).toEqual({ over, timeout: 20, max_tool_calls: 57 });

    // `tool_chain: true`, with only two tools: no settings to show.
    const dir = tempDir();
    writeFileSync(path.join(dir, "t.yaml"), `base: ${path.join(ROOT, "test/fixtures/codeaction/common.yaml")}\nglobal:\n  tools: [list_employees, get_employee]\n  tool_chain: true\n`);
    const plain = await runCliInProcess(["validate", path.join(dir, "t.yaml")]);
    expect(plain.stdout).toContain("    tools: list_employees <- employees.tools:list_employees, get_employee <- employees.tools:get_employee, tool_chain (programs over: list_employees, get_employee)\n");
    const plainJson = await runCliInProcess(["validate", path.join(dir, "t.yaml"), "--json"]);
    expect((JSON.parse(plainJson.stdout) as { agents: Array<{ tool_chain?: unknown }> }).agents[0]!.tool_chain).toEqual({ over: ["list_employees", "get_employee"] });
    // Without tool_chain, no such key.
    const none = await runCliInProcess(["validate", tactic, "--json"]);
    expect((JSON.parse(none.stdout) as { agents: Array<Record<string, unknown>> }).agents[0]).not.toHaveProperty("tool_chain");
  });

  it("tools list shows every tool with its ref; declarations and command tools are marked", async () => {
    const result = await runCliInProcess(["tools", "list", "-p", weather]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split("\n").filter(Boolean)).toEqual([
      "weather.tools:divide         Divide two numbers",
      "weather.tools:draw           Draw a line through the points",
      "weather.tools:forecast       Daily forecast for a city (command)",
      "weather.tools:get_weather    Get the current weather for a city",
      "weather.tools:to_fahrenheit  Convert a temperature from Celsius to Fahrenheit",
      "weather.tools:weather_brief  Get the current weather for a city",
      "weather.tools:web_search     Search the web for information (declaration)",
      "search.tools:web_search      Search the web for information",
    ]);
  });

  it("tools list --json: one object with schema_version and the tools", async () => {
    const result = await runCliInProcess(["tools", "list", "-p", weather, "--json"]);
    const printed = JSON.parse(result.stdout) as { schema_version: number; tools: Array<{ ref: string; kind: string }> };
    expect(printed.schema_version).toBe(1);
    expect(printed.tools.find((tool) => tool.ref === "weather.tools:forecast")?.kind).toBe("command");
  });

  it("proxy list --json: one object with schema_version and the proxies", async () => {
    const list = await runCliInProcess(["proxy", "list", "-p", weather, "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const listed = JSON.parse(list.stdout) as { schema_version: number; proxies: Array<{ path: string; source: string }> };
    expect(listed.schema_version).toBe(1);
    expect(listed.proxies.find((proxy) => proxy.path === "weather")).toMatchObject({ path: "weather" });
  });

  it("proxy docs --json: one object with schema_version and each proxy's endpoints", async () => {
    const docs = await runCliInProcess(["proxy", "docs", "weather", "-p", weather, "--json"]);
    expect(docs.code, docs.stderr).toBe(0);
    const printed = JSON.parse(docs.stdout) as { schema_version: number; proxies: Array<{ path: string; endpoints: Array<{ endpoint: string }> }> };
    expect(printed.schema_version).toBe(1);
    expect(printed.proxies.map((proxy) => proxy.path)).toEqual(["weather"]);
    expect(printed.proxies[0]!.endpoints.map((endpoint) => endpoint.endpoint)).toEqual(["current/{city}", "forecast/daily"]);
    const unknown = await runCliInProcess(["proxy", "docs", "wether", "-p", weather, "--json"]);
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ schema_version: 1, error: { code: "proxy_not_found" } });
  });

  it("proxy call --json: {schema_version, result}", async () => {
    const call = await runCliInProcess(["proxy", "call", "weather/forecast/daily", "--params", '{"city": "Tokyo", "days": 2}', "-p", weather, "--json", "--no-cache"]);
    expect(call.code, call.stderr).toBe(0);
    const printed = JSON.parse(call.stdout) as { schema_version: number; result: Array<{ high: number }> };
    expect(printed.schema_version).toBe(1);
    expect(printed.result).toHaveLength(2);
  });

  it("tools show prints the seed's get_weather JSON exactly", async () => {
    const result = await runCliInProcess(["tools", "show", "weather.tools:get_weather", "-p", weather]);
    const expected = readFileSync(path.join(ROOT, "test/tools/fixtures/get_weather.tool.json"), "utf8");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(expected.trim());
  });

  it("tools call prints result_str in the seed's format", async () => {
    const result = await runCli(["tools", "call", "get_weather", "-p", weather, "--args", '{"city": "Paris"}']);
    expect(result).toMatchObject({
      code: 0,
      stdout: "Return of calling function get_weather with arguments {'city': 'Paris'}:\n---\nSunny, 22 degrees celsius in Paris\n---\n",
    });
  });

  it("repeatable options may come before the positional argument", async () => {
    const result = await runCliInProcess(["tools", "call", "-p", weather, "weather.tools:get_weather", "--args", '{"city": "Oslo"}']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("Sunny, 22 degrees celsius in Oslo");
  });

  it("tools call: a throwing tool prints Error: <message> and exits 1", async () => {
    const result = await runCliInProcess(["tools", "call", "divide", "-p", weather, "--args", '{"a": 1, "b": 0}']);
    expect(result).toMatchObject({ code: 1, stdout: "Error: Division by zero\n" });
  });

  it("tools call: invalid arguments are explained, the tool does not run", async () => {
    const result = await runCliInProcess(["tools", "call", "draw", "-p", weather, "--args", '{"points": [{"x": 1, "y": 2}], "color": "green"}']);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe(`Error: Invalid arguments for draw: argument 'color' must be one of "red", "blue", got string "green"\n`);
  });

  it("tools call: a declaration is bound to its implementation in a dependency", async () => {
    const result = await runCliInProcess(["tools", "call", "web_search", "-p", weather, "--args", '{"query": "lllm"}']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("Top results for 'lllm'");
  });

  it("tools call: a command tool (python) gets JSON on stdin; its stderr becomes the error", async () => {
    const ok = await runCliInProcess(["tools", "call", "forecast", "-p", weather, "--args", '{"city": "Oslo", "days": 1}', "--json"]);
    expect(JSON.parse(ok.stdout)).toEqual({ schema_version: 1, result: [{ city: "Oslo", day: 1, high: 18, low: 10 }] });
    const failed = await runCliInProcess(["tools", "call", "forecast", "-p", weather, "--args", '{"city": "Oslo", "days": 0}']);
    expect(failed).toMatchObject({ code: 1, stdout: "Error: days must be at least 1\n" });
  });

  it("tools call: the processor formats the result", async () => {
    const result = await runCliInProcess(["tools", "call", "weather_brief", "-p", weather, "--args", '{"city": "Paris"}']);
    expect(result.stdout).toBe("[weather_brief] Sunny in Paris\n");
  });

  it("schema prints the tactic, test and package JSON Schemas", async () => {
    for (const kind of ["tactic", "test", "package", "proxy", "settings"]) {
      const result = await runCliInProcess(["schema", kind]);
      expect(result.code, result.stderr).toBe(0);
      const schema = JSON.parse(result.stdout) as { title?: string; properties?: object };
      expect(schema.properties).toBeTypeOf("object");
    }
    const bad = await runCliInProcess(["schema", "tactics"]);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toContain("Allowed choices are tactic, test, package, proxy, settings");
  });

  it("schema settings is the schema the settings are checked against, with cache_write and the batch prices", async () => {
    const result = await runCliInProcess(["schema", "settings"]);
    const schema = JSON.parse(result.stdout) as { properties: { prices: { additionalProperties: { properties: Record<string, { description?: string }> } } } };
    expect(Object.keys(schema.properties)).toEqual(["model", "packages", "home", "log", "reply_size", "prices"]);
    expect(Object.keys(schema.properties.prices.additionalProperties.properties)).toEqual(["input", "output", "cached_input", "cache_write", "batch_input", "batch_output"]);
  });

  it("a package file may import any public name from lllm, not only tool()", async () => {
    const { mkdirSync, writeFileSync } = await import("node:fs");
    const dir = tempDir("lllm-api-");
    mkdirSync(path.join(dir, "tools"));
    writeFileSync(path.join(dir, "tools", "kinds.ts"), 'import { tool, z, McpConnections, ROUND_LIMIT_TEXT } from "lllm";\nexport default tool({ name: "kinds", description: "x", parameters: z.object({ a: z.string() }), run: () => `${typeof McpConnections} ${ROUND_LIMIT_TEXT.length}` });\n');
    // Spawned: the names beyond the light ones load lllm's index beside the built files (require), which in this
    // process, run from the TypeScript sources, is not there.
    const result = await runCli(["tools", "call", "kinds", "-p", dir, "--args", '{"a": "x"}', "--json"]);
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual({ schema_version: 1, result: "function 69" });
  });

  it("packages in ./lllm_packages are found without flags", async () => {
    const result = await runCliInProcess(["tools", "list"], { cwd: path.join(ROOT, "test/fixtures/project") });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("local.tools:shout");
  });

  it("NO_COLOR: no escape codes in errors", async () => {
    const result = await runCliInProcess(["validate", "missing.yaml"], { env: { FORCE_COLOR: "1", NO_COLOR: "1" } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).not.toContain("\u001b[");
  });

  it("a closed stdout (| head) ends quietly", async () => {
    const child = spawn(`${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} schema tactic | head -c 10`, { shell: true, cwd: ROOT });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    expect(stderr).toBe("");
  });

  it("an stdout that cannot be written (a full disk) is said on stderr with exit 1, not a crash", async () => {
    // /dev/full (Linux): every write fails with ENOSPC, as a redirection to a full disk does.
    const child = spawn(`${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} validate ${tactic} > /dev/full`, { shell: true, cwd: ROOT });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(1);
    expect(stderr).toBe("lllm: error: could not write the output to stdout: ENOSPC: no space left on device, write\n");
  });
});
