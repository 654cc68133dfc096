import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { BIN, emptyHome, ROOT, runCli } from "../helpers/runCli.js";
import { tempDir, tempTree } from "../helpers/tempTree.js";

// Each case spawns the CLI, most with a Python kernel: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

let model: MockOpenAIServer | undefined;
let api: Server | undefined;
afterEach(async () => {
  await model?.close();
  await new Promise((resolve) => (api ? api.close(resolve) : resolve(undefined)));
  api = undefined;
});

/** A local weather API that records what it was asked. */
async function startWeatherApi(): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  api = createServer((request, response) => {
    seen.push(request.url ?? "");
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({ temperature: 21.5, condition: "sunny" }));
  });
  await new Promise<void>((resolve) => api!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(api.address() as AddressInfo).port}/weather`, seen };
}

type Wire = { role: string; content: string };

describe("lllm run with proxies: query_api_doc, then run_python with CALL_API", () => {
  it("reads the docs, runs Python twice reusing a variable, reaches an HTTP API with the key added host-side", async () => {
    const weatherApi = await startWeatherApi();
    model = await startMockOpenAIServer({
      script: [
        { tool_calls: [{ name: "query_api_doc", arguments: { proxy_name: "weather" } }] },
        { tool_calls: [{ name: "run_python", arguments: { code: 'tokyo = CALL_API("weather/current/Tokyo", {})\nlive = CALL_API("weather_api/current/Oslo", {})\nprint(tokyo["temperature"], live["condition"])' } }] },
        { tool_calls: [{ name: "run_python", arguments: { code: 'import os\nprint("Tokyo is", tokyo["condition"], "| key visible:", os.environ.get("WEATHER_API_KEY"))' } }] },
        "Tokyo is cloudy; Oslo is sunny.",
      ],
    });
    const result = await runCli(["run", path.join(ROOT, "test/fixtures/run/proxy.yaml"), "--input", "Tokyo and Oslo?"], {
      env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.url, WEATHER_API_KEY: "secret-weather-key", LLLM_PROXY_WEATHER_API_BASE_URL: weatherApi.url },
    });
    expect(result.stdout).toBe("Tokyo is cloudy; Oslo is sunny.\n");
    expect(result.code, result.stderr).toBe(0);
    const posts = model.requests.filter((request) => request.method === "POST");
    const system = (posts[0]!.body.messages as Wire[])[0]!.content;
    expect(system).toContain("You are a weather analyst.");
    expect(system).toContain("## Weather API (weather)");
    expect(system).toContain("- **current/{city}** [GET] – Current temperature and conditions for a city.");
    const toolResults = (posts[3]!.body.messages as Wire[]).filter((message) => message.role === "tool").map((message) => message.content);
    expect(toolResults[0]).toContain("## Weather API (weather)\nCurrent weather and forecasts for any city.");
    expect(toolResults[1]).toContain("---\n18 sunny\n\n---");
    expect(toolResults[2]).toContain("Tokyo is cloudy | key visible: None");
    expect(weatherApi.seen).toEqual(["/weather/current/Oslo?units=metric&api_key=secret-weather-key"]);
  });

  it("lllm exec runs Python with CALL_API from standard input", async () => {
    const result = await runCli(["exec", "--proxy", "weather", "-p", "packages-example/weather"], { input: 'r = CALL_API("weather/forecast/daily", {"city": "Tokyo", "days": 2})\nprint(len(r), r[1]["high"])\n' });
    expect(result).toMatchObject({ code: 0, stdout: "2 19\n" });
    // A misspelt name is the flag's: the error names it, not a tactic key the user never wrote.
    const misspelt = await runCli(["exec", "--proxy", "weathr", "-p", "packages-example/weather"], { input: "print(1)\n" });
    expect(misspelt.code, misspelt.stderr).toBe(2);
    expect(misspelt.stderr).toContain("lllm: error: --proxy names `weathr`, which is not a loaded proxy\n  did you mean `weather`?");
    // A folder given as the code file is the user's mistake (exit 2), not an internal error.
    const folder = tempDir();
    const notAFile = await runCli(["exec", "--file", folder]);
    expect(notAFile.code, notAFile.stderr).toBe(2);
    expect(notAFile.stderr).toContain(`code file \`${folder}\` cannot be read (it is a folder)`);
    expect(notAFile.stderr).not.toContain("internal error");
  });

  it("lllm exec on a terminal shows the control characters an API sent as escapes; into a pipe they stay as they are", async () => {
    api = createServer((_request, response) => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ temperature: 21.5, condition: "sun\u001b[8mny\u001b]0;title\u0007" }));
    });
    await new Promise<void>((resolve) => api!.listen(0, "127.0.0.1", resolve));
    const env = { WEATHER_API_KEY: "k", LLLM_PROXY_WEATHER_API_BASE_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}/weather` };
    const code = path.join(tempTree({ "c.py": 'print(CALL_API("weather_api/current/Paris", {})["condition"])\n' }), "c.py");
    const args = ["exec", "--proxy", "weather_api", "-p", "packages-example/weather", "--file", code];
    const piped = await runCli(args, { env });
    expect(piped).toMatchObject({ code: 0, stdout: "sun\u001b[8mny\u001b]0;title\u0007\n" });
    // `script` (util-linux) gives the CLI a real terminal; asynchronous, so that the API above can answer.
    const command = [process.execPath, BIN, ...args].map((word) => `'${word}'`).join(" ");
    const terminal = await new Promise<string>((resolve, reject) => {
      const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: emptyHome(), NO_COLOR: "1", TERM: "dumb", ...env } });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.on("error", reject);
      child.on("close", () => resolve(output));
    });
    expect(terminal.replace(/\r/g, "")).toBe("sun\\u001b[8mny\\u001b]0;title\\u0007\n");
  });

  it("a bad path value raises ValueError in CALL_API (seed 000, Step 12) before anything is sent", async () => {
    const weatherApi = await startWeatherApi();
    const code = [
      'for path, params in [("weather_api/current/..", {}), ("weather_api/current/{city}", {"city": "."}), ("weather_api/current/{city}", {"city": ""}), ("weather_api/current/{city}", {})]:',
      "    try:",
      "        CALL_API(path, params)",
      "    except ValueError as error:",
      '        print("ValueError:", error)',
      'print(CALL_API("weather_api/current/BRK%2FA", {})["condition"])',
      "",
    ].join("\n");
    const result = await runCli(["exec", "--proxy", "weather_api", "-p", "packages-example/weather"], {
      input: code,
      env: { WEATHER_API_KEY: "k", LLLM_PROXY_WEATHER_API_BASE_URL: weatherApi.url },
    });
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe(
      [
        "ValueError: `{city}` of weather_api/current/{city} cannot be `..`: a path value names one item",
        "ValueError: `{city}` of weather_api/current/{city} cannot be `.`: a path value names one item",
        'ValueError: `{city}` of weather_api/current/{city} needs a value: write it in the path or pass it in params, e.g. {"city": "..."}',
        'ValueError: `{city}` of weather_api/current/{city} needs a value: write it in the path or pass it in params, e.g. {"city": "..."}',
        "sunny",
        "",
      ].join("\n"),
    );
    expect(result.code, result.stderr).toBe(0);
    // Only the good call reached the API.
    expect(weatherApi.seen).toEqual(["/weather/current/BRK%2FA?units=metric&api_key=k"]);
  });

  it("lllm proxy docs prints the documentation of Step 13 exactly", async () => {
    const result = await runCli(["proxy", "docs", "weather", "-p", "packages-example/weather"]);
    expect(result.stdout).toBe(
      [
        "## Weather API (weather)",
        "Current weather and forecasts for any city.",
        "- **current/{city}** [GET] – Current temperature and conditions for a city.",
        "    - `city*` (str) e.g. London",
        "    - `units` (str) e.g. celsius",
        "- **forecast/daily** [GET] – Daily forecast for a city.",
        "    - `city*` (str) e.g. London",
        "    - `days` (int) e.g. 5",
        "",
      ].join("\n"),
    );
  });
});

describe("the proxy block's options, seen in the first request (--dry-run)", () => {
  type Body = { messages: Array<{ role: string; content: string }>; tools?: Array<{ function: { name: string } }> };
  async function dryRun(yaml: string): Promise<Body> {
    const { writeFileSync } = await import("node:fs");
    const dir = tempDir("lllm-proxy-block-");
    writeFileSync(path.join(dir, "t.yaml"), `packages: [${path.join(ROOT, "packages-example/weather")}]\nglobal: {model_name: gpt-test}\n${yaml}`);
    const result = await runCli(["run", path.join(dir, "t.yaml"), "--input", "hi", "--dry-run"]);
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as Body;
  }
  const toolNames = (body: Body): string[] => (body.tools ?? []).map((tool) => tool.function.name);

  it("exec_env other than interpreter: the docs and query_api_doc, no run_python", async () => {
    const body = await dryRun("agent_configs:\n  - name: a\n    system_prompt: Hi.\n    proxy: {activate_proxies: [weather], exec_env: null}\n");
    expect(toolNames(body)).toEqual(["query_api_doc"]);
    expect(body.messages[0]!.content).toContain("## Weather API (weather)");
    expect(body.messages[0]!.content).not.toContain("run_python");
  });

  it("prompt_template replaces the instructions; without {api_directory} the docs stay out of the prompt", async () => {
    const body = await dryRun("agent_configs:\n  - name: a\n    system_prompt: Hi.\n    proxy:\n      activate_proxies: [weather]\n      exec_env: interpreter\n      max_output_chars: 1234\n      prompt_template: \"\\n\\nRead docs with query_api_doc first. Output over {max_output_chars} characters ends with {truncation_indicator}\"\n");
    expect(body.messages[0]!.content).toBe("Hi.\n\nRead docs with query_api_doc first. Output over 1234 characters ends with ... (truncated)");
    expect(toolNames(body)).toEqual(["query_api_doc", "run_python"]);
  });

  it("a pkg.proxies ref in tools: activates that proxy with the interpreter", async () => {
    const body = await dryRun("agent_configs:\n  - name: a\n    system_prompt: Hi.\n    tools: [get_weather, weather.proxies:weather_api]\n");
    expect(toolNames(body)).toEqual(["get_weather", "query_api_doc", "run_python"]);
    expect(body.messages[0]!.content).toContain("## Weather HTTP API (weather_api)");
    expect(body.messages[0]!.content).not.toContain("## Weather API (weather)");
  });
});

describe("the proxy example of docs/proxies.md", () => {
  it("runs the analyst tactic offline: docs, two Python cells sharing variables, an answer", async () => {
    const result = await runCli(["run", "packages-example/weather/tactics/analyst.yaml", "--model", "scripted:packages-example/weather/scripted/analyst.yaml", "--input", "Compare Tokyo and Paris", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { output: string; tool_calls: Array<{ name: string; result: unknown }> };
    expect(report.output).toBe("Tokyo and Paris are both cloudy at 18 degrees.");
    expect(report.tool_calls.map((call) => call.name)).toEqual(["query_api_doc", "run_python", "run_python"]);
    expect(report.tool_calls[1]!.result).toBe("18 18\n");
    expect(report.tool_calls[2]!.result).toBe("Tokyo is cloudy and Paris is cloudy\n");
  });
});

describe("the sandbox: block's limits", () => {
  const analyst = (sandbox: string): string =>
    tempTree({ "t.yaml": `name: t\nbase: ${path.join(ROOT, "packages-example/weather/tactics/analyst.yaml")}\nsandbox:\n  backend: auto\n${sandbox}` });

  it("a limit that is no number, or zero, is refused by validate and by run before any model call, at its line", async () => {
    const dir = analyst("  cpu_time: \"0\"\n  max_processes: abc\n  memory_limit: 1X\n  network: true\n");
    const validated = await runCli(["validate", "t.yaml"], { cwd: dir });
    expect(validated.code, validated.stderr).toBe(2);
    expect(validated.stderr).toContain("t.yaml:6:18: sandbox.max_processes must be a whole number, at least 1 (got \"abc\")");
    expect(validated.stderr).toContain("t.yaml:7:17: sandbox.memory_limit must be a size such as \"512M\" or \"1G\", or a number of megabytes (got \"1X\")");
    // What the schema lets through (a zero in words, a network) is read when the tactic is bound.
    const bound = analyst("  cpu_time: \"0\"\n  network: true\n  memory_limit: \"536870912\"\n  file_size: 99999999T\n");
    const checked = await runCli(["validate", "t.yaml"], { cwd: bound });
    expect(checked.code, checked.stderr).toBe(2);
    expect(checked.stderr).toContain("t.yaml:5:13: sandbox.cpu_time `0` is not a duration above 0");
    expect(checked.stderr).toContain("t.yaml:6:12: sandboxed code never gets a network");
    // A byte count written as a string is no more megabytes than one written as a number; a size past any system's is no size.
    expect(checked.stderr).toContain("t.yaml:7:17: sandbox.memory_limit 536870912 would be 536870912 megabytes: a bare number is megabytes");
    expect(checked.stderr).toContain("t.yaml:8:14: sandbox.file_size `99999999T` is not a size");
    model = await startMockOpenAIServer({ script: ["never asked"] });
    const run = await runCli(["run", "t.yaml", "--input", "Paris?"], { cwd: bound, env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.url } });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain("sandbox.cpu_time `0` is not a duration above 0");
    expect(model.requests.filter((request) => request.method === "POST")).toHaveLength(0);
  });

  it("a kernel that cannot start under its limits stops the run with the kernel's words (or how it ended) and the limit to raise", async () => {
    // Python cannot start a thread in 16 MB of address space: the kernel says so, and the model is not told to go on.
    // Or the memory limit kills it first (SIGKILL), which of the two depends on timing: the run says that instead.
    const dir = analyst("  memory_limit: 16M\n");
    const result = await runCli(["run", "t.yaml", "--model", `scripted:${path.join(ROOT, "packages-example/weather/scripted/analyst.yaml")}`, "--input", "Paris?"], { cwd: dir });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/the Python kernel \(in bubblewrap\) (exited with code 70 before it was ready:\nlllm kernel: cannot start: RuntimeError: can't start new thread|was killed by SIGKILL before it was ready\n)/);
    expect(result.stderr).toContain("The sandbox's limits may be too low for Python to start (memory_limit 16 MB, default 1024)");
  });

  it("fractions of a second or of a kilobyte reach the kernel as whole limits", async () => {
    // 0.1 MB of /tmp is 104857.6 bytes: bubblewrap and gVisor take whole ones.
    const dir = analyst("  cpu_time: 20.5\n  file_size: 0.1\n  memory_limit: 536870912B\n");
    const result = await runCli(["run", "t.yaml", "--model", `scripted:${path.join(ROOT, "packages-example/weather/scripted/analyst.yaml")}`, "--input", "Paris?", "--json"], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { tool_calls: Array<{ result: unknown; error: unknown }> };
    expect(report.tool_calls[1]).toMatchObject({ result: "18 18\n", error: null });
  });
});
