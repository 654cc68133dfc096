import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer, type ScriptedTurn, type InjectedFailure } from "../../src/testing/index.js";
import { ROOT, runCli, type CliResult } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";

// Each case spawns the CLI or runs it in this process (which loads its commands the first time), some with a
// sandboxed program: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

const fixtures = path.join(ROOT, "test/fixtures/run");
let server: MockOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * Start the mock model server with a script, run the CLI against it over HTTP: its main() in this process, or the
 * built CLI (`spawn`) for what needs a process of its own (standard input) and for the end-to-end cases.
 */
async function run(args: string[], script: ScriptedTurn[], options: { failures?: InjectedFailure[]; input?: string; env?: NodeJS.ProcessEnv; spawn?: boolean } = {}): Promise<CliResult> {
  server = await startMockOpenAIServer({ script, ...(options.failures ? { failures: options.failures } : {}) });
  const env = { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.url, ...options.env };
  if (options.spawn === true || options.input !== undefined) return runCli(args, { env, ...(options.input !== undefined ? { input: options.input } : {}) });
  return runCliInProcess(args, { env });
}

type WireMessage = { role: string; content?: string | null; tool_calls?: Array<{ function: { name: string; arguments: string } }>; tool_call_id?: string };
const messagesOf = (index: number): WireMessage[] => (server!.requests.filter((request) => request.method === "POST")[index]!.body.messages ?? []) as WireMessage[];
const toolsOf = (index: number): string[] => ((server!.requests.filter((request) => request.method === "POST")[index]!.body.tools ?? []) as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
const loop = path.join(fixtures, "loop.yaml");

describe("lllm run against an OpenAI-compatible server", () => {
  it("runs the tool loop and leaves the dialog of Step 4 (system, user, tool_call, tool, tool, assistant)", async () => {
    const result = await run(["run", loop, "--input", "What is the weather in Paris and Tokyo?"], [
      { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }, { name: "get_weather", arguments: { city: "Tokyo" } }] },
      "Sunny, 22 degrees in both.",
    ], { spawn: true });
    expect(result.stderr).toBe("");
    expect(result).toMatchObject({ code: 0, stdout: "Sunny, 22 degrees in both.\n" });
    const posts = server!.requests.filter((request) => request.method === "POST");
    expect(posts).toHaveLength(2);
    expect(posts[0]!.headers.authorization).toBe("Bearer test-key");
    expect(posts[0]!.body.model).toBe("gpt-test");
    expect(toolsOf(0)).toEqual(["get_weather", "divide"]);
    const dialog = messagesOf(1);
    expect(dialog.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool", "tool"]);
    expect(dialog[0]!.content).toBe("You are a weather assistant.");
    expect(dialog[1]!.content).toBe("What is the weather in Paris and Tokyo?");
    expect(dialog[2]!.tool_calls!.map((call) => JSON.parse(call.function.arguments))).toEqual([{ city: "Paris" }, { city: "Tokyo" }]);
    expect(dialog[3]!.content).toBe("Return of calling function get_weather with arguments {'city': 'Paris'}:\n---\nSunny, 22 degrees celsius in Paris\n---");
    expect(dialog[4]!.content).toContain("Sunny, 22 degrees celsius in Tokyo");
  });

  it("caps tool rounds: the limit message, then one call without tools", async () => {
    const result = await run(["run", loop, "--input", "Weather everywhere?", "--max-steps", "2"], [
      { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
      { tool_calls: [{ name: "get_weather", arguments: { city: "Rome" } }] },
      "Paris and Rome are sunny.",
    ]);
    expect(result).toMatchObject({ code: 0, stdout: "Paris and Rome are sunny.\n" });
    const last = messagesOf(2);
    expect(last.at(-1)).toEqual({ role: "user", content: "You are reaching the limit of tool calls. Provide the final response." });
    expect(toolsOf(2)).toEqual([]);
    expect(toolsOf(1)).toEqual(["get_weather", "divide"]);
  });

  it("does not run a repeated call again and tells the model to use the earlier result", async () => {
    const result = await run(["run", loop, "--input", "Paris?", "--json"], [
      { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
      { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
      "Sunny in Paris.",
    ]);
    expect(result.code, result.stderr).toBe(0);
    const repeated = messagesOf(2).at(-1)!;
    expect(repeated.role).toBe("tool");
    expect(repeated.content).toBe("This call was already made with the same arguments in this response; use the earlier result:\nReturn of calling function get_weather with arguments {'city': 'Paris'}:\n---\nSunny, 22 degrees celsius in Paris\n---");
  });

  it("returns a throwing tool's error to the model", async () => {
    const result = await run(["run", loop, "--input", "1/0?"], [{ tool_calls: [{ name: "divide", arguments: { a: 1, b: 0 } }] }, "It cannot be divided."]);
    expect(result).toMatchObject({ code: 0, stdout: "It cannot be divided.\n" });
    expect(messagesOf(1).at(-1)!.content).toBe("Error: Division by zero");
  });

  it("ends with exit 1 when the model calls a tool that is not offered, naming it and the offered ones", async () => {
    const result = await run(["run", loop, "--input", "Go"], [{ tool_calls: [{ name: "launch_rockets", arguments: {} }] }]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("launch_rockets");
    expect(result.stderr).toContain("get_weather, divide");
  });

  it("returns malformed JSON arguments to the model instead of crashing", async () => {
    const result = await run(["run", loop, "--input", "Paris?"], [{ tool_calls: [{ name: "get_weather", arguments: "{city: Paris" }] }, "Sorry, sunny."]);
    expect(result).toMatchObject({ code: 0, stdout: "Sorry, sunny.\n" });
    expect(messagesOf(1).at(-1)!.content).toMatch(/^Error: the arguments of get_weather are not valid JSON \(.+\)\. Send a JSON object\.$/);
  });

  it("retries after a 500 and a 429 with retry-after", async () => {
    const result = await run(["run", loop, "--input", "Hi"], ["Hello."], { failures: [{ status: 500 }, { status: 429, retryAfter: 1 }] });
    expect(result).toMatchObject({ code: 0, stdout: "Hello.\n" });
    expect(server!.requests.filter((request) => request.method === "POST")).toHaveLength(3);
  });

  it("--verbose shows each round on stderr: the model call, the tool calls with arguments, results cut to a line", async () => {
    const result = await run(["run", loop, "--input", "Paris?", "--verbose"], [{ tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] }, "Sunny."]);
    expect(result.stdout).toBe("Sunny.\n");
    const lines = result.stderr.trim().split("\n");
    expect(lines[0]).toBe("[weather_bot] model call, round 1: 2 messages, tools: get_weather, divide");
    expect(lines[1]).toMatch(/^\[weather_bot\] reply: 1 tool call \(\d+\+\d+ tokens\)$/);
    expect(lines[2]).toMatch(/^\[weather_bot\] get_weather\(\{"city":"Paris"\}\) -> Sunny, 22 degrees celsius in Paris \d+ ms$/);
    expect(lines[3]).toBe("[weather_bot] model call, round 2: 4 messages, tools: get_weather, divide");
    expect(lines[4]).toMatch(/^\[weather_bot\] reply: Sunny\. \(\d+\+\d+ tokens\)$/);
  });

  it("an unknown model (404) is exit 1 naming the model", async () => {
    const result = await run(["run", loop, "--input", "Hi"], [], { failures: [{ status: 404 }] });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("gpt-test");
  });

  it("a missing key is a configuration error (exit 2) naming the variable", async () => {
    // At OpenAI's own URL a key is required; it is checked before anything is sent (so no network is needed).
    server = await startMockOpenAIServer({ script: ["never sent"] });
    const result = await runCliInProcess(["run", loop, "--input", "Hi"], { env: { OPENAI_API_KEY: "", OPENAI_BASE_URL: "" } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("OPENAI_API_KEY");
    expect(server!.requests).toHaveLength(0);
  });

  it("a rejected key (401) is exit 1 naming the variable", async () => {
    const result = await run(["run", loop, "--input", "Hi"], [], { failures: [{ status: 401 }] });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("OPENAI_API_KEY");
    expect(result.stderr).toContain("401");
  });

  it("--json prints output, usage, tool calls and duration", async () => {
    const result = await run(["run", loop, "--input", "Paris?", "--json"], [
      { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }], usage: { prompt_tokens: 50, completion_tokens: 10 } },
      { text: "Sunny.", usage: { prompt_tokens: 80, completion_tokens: 3 } },
    ]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      output: "Sunny.",
      usage: { prompt_tokens: 130, completion_tokens: 13, total_tokens: 143, llm_calls: 2 },
      tool_calls: [{ agent: "weather_bot", name: "get_weather", arguments: { city: "Paris" }, result: "Sunny, 22 degrees celsius in Paris", error: null }],
    });
    expect(typeof report.duration_ms).toBe("number");
    expect(typeof (report.tool_calls as Array<{ duration_ms: unknown }>)[0]!.duration_ms).toBe("number");
    // The JSON a user's scripts read: these keys, in this order (the library's own types are camelCase).
    expect(Object.keys(report)).toEqual(["schema_version", "output", "usage", "tool_calls", "model_calls", "duration_ms", "cost", ...("run_id" in report ? ["run_id"] : [])]);
    // `lllm run --help` names those keys, so the reader of the help knows what a script gets.
    const help = (await runCliInProcess(["run", "--help"])).stdout.replace(/\s+/g, " ");
    for (const key of Object.keys(report)) expect(help, key).toMatch(new RegExp(`--json print one JSON object: \\{[^}]*\\b${key}\\b`));
    expect(Object.keys(report.usage as object)).toEqual(["prompt_tokens", "completion_tokens", "total_tokens", "llm_calls", "cached_prompt_tokens", "reasoning_tokens", "by_agent", "by_tool"]);
    // Which model answered each call (a fallback chain may change it), and where the spend went.
    expect((report.model_calls as Array<{ agent: string; model: string }>).map((call) => [call.agent, call.model])).toEqual([["weather_bot", "gpt-test"], ["weather_bot", "gpt-test"]]);
    expect(report.usage).toMatchObject({ by_agent: { weather_bot: { model_calls: 2, prompt_tokens: 130, completion_tokens: 13, tool_calls: 1 } }, by_tool: { get_weather: { calls: 1, failed: 0, model_calls: 0 } } });
    expect(Object.keys((report.tool_calls as object[])[0]!)).toEqual(["agent", "name", "arguments", "result", "error", "duration_ms"]);
  });

  it("--stream prints the answer as it arrives, over SSE", async () => {
    const result = await run(["run", loop, "--input", "Paris?", "--stream"], [{ tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] }, "It is sunny and warm in Paris today."]);
    expect(result).toMatchObject({ code: 0, stdout: "It is sunny and warm in Paris today.\n" });
    expect(server!.requests.filter((request) => request.method === "POST").every((request) => request.body.stream === true)).toBe(true);
  });

  it("runs a pipeline: steps in order, each seeing the input, vars and earlier steps; stdin is the input", async () => {
    const result = await run(["run", path.join(fixtures, "pipeline.yaml"), "--var", "tone=friendly"], ["A rough draft.", "A polished draft."], { input: "write about rain\n" });
    expect(result).toMatchObject({ code: 0, stdout: "A polished draft.\n" });
    expect(messagesOf(0).at(-1)!.content).toBe("Draft: write about rain");
    expect(messagesOf(1)[0]!.content).toBe("You edit drafts.");
    expect(messagesOf(1).at(-1)!.content).toBe("Edit in a friendly tone: A rough draft.");
  });

  it("asks for JSON with the output schema and prints the validated object; a bad reply is sent back to be fixed", async () => {
    const result = await run(["run", path.join(fixtures, "output.yaml"), "--input", "Paris"], ['{"city": "Paris"}', '{"city": "Paris", "temperature": 22}']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ city: "Paris", temperature: 22 });
    const first = server!.requests.filter((request) => request.method === "POST")[0]!.body;
    expect(first.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "city_report", schema: { required: ["city", "temperature"] } } });
    const retry = messagesOf(1).at(-1)!;
    expect(retry.role).toBe("user");
    expect(retry.content).toMatch(/^Error: the JSON does not match the output schema: .*temperature.*\. Please fix\.$/);
  });

  it("--dry-run prints the first request and sends nothing", async () => {
    const result = await run(["run", loop, "--input", "Paris?", "--dry-run"], []);
    expect(result.code, result.stderr).toBe(0);
    const request = JSON.parse(result.stdout) as { model: string; messages: Array<{ role: string }>; tools: Array<{ function: { name: string } }> };
    expect(request.model).toBe("gpt-test");
    expect(request.messages.map((message) => message.role)).toEqual(["system", "user"]);
    expect(request.tools.map((tool) => tool.function.name)).toEqual(["get_weather", "divide"]);
    expect(server!.requests).toHaveLength(0);
    // The body as the provider sends it: model_args merged in, the provider prefix stripped from the model.
    const weather = await runCliInProcess(["run", "packages-example/weather/tactics/weather.yaml", "--input", "hi", "--dry-run", "--model", "ollama/llama3"]);
    expect(JSON.parse(weather.stdout)).toMatchObject({ model: "llama3", temperature: 0.1 });
  });

  it("--dry-run --json wraps the request as every --json output is: {schema_version, dry_run, request}", async () => {
    const result = await run(["run", loop, "--input", "Paris?", "--dry-run", "--json"], []);
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout) as { schema_version: number; dry_run: boolean; request: { model: string; messages: Array<{ role: string }> } };
    expect(Object.keys(printed)).toEqual(["schema_version", "dry_run", "request"]);
    expect(printed.schema_version).toBe(1);
    expect(printed.dry_run).toBe(true);
    expect(printed.request.model).toBe("gpt-test");
    expect(printed.request.messages.map((message) => message.role)).toEqual(["system", "user"]);
    expect(server!.requests).toHaveLength(0);
  });

  it("a template placeholder nothing fills stops the run before any model call (exit 2)", async () => {
    const result = await run(["run", path.join(fixtures, "pipeline.yaml"), "--var", "tone=dry", "--input", "rain"], ["draft", "final"]);
    expect(result.code, result.stderr).toBe(0); // pipeline.yaml's placeholders are all filled: input, tone (vars and --var), draft (as)
    const dir = tempDir("lllm-vars-");
    (await import("node:fs")).writeFileSync(path.join(dir, "t.yaml"), "global: {model_name: gpt-test}\nprompt: 'Answer in {language}: {input}'\nagent_configs:\n  - {name: bot, system_prompt: hi}\n");
    const missing = await runCliInProcess(["run", path.join(dir, "t.yaml"), "--input", "hi"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server!.url } });
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain("t.yaml:2:9: {language} in prompt has no value");
    expect(missing.stderr).toContain("--var language=");
    expect(server!.requests.filter((request) => request.method === "POST")).toHaveLength(2);
    const filled = await runCliInProcess(["run", "--var", "language=French", path.join(dir, "t.yaml"), "--input", "hi", "--dry-run"]);
    expect(filled.code, filled.stderr).toBe(0);
    expect((JSON.parse(filled.stdout) as { messages: Array<{ content: string }> }).messages[1]!.content).toBe("Answer in French: hi");
  });

  it("--input-file that is a folder is a usage error", async () => {
    const result = await runCliInProcess(["run", loop, "--input-file", fixtures]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("is a folder, not a file");
  });

  it("no input is a usage error", async () => {
    // Without --input, run reads its standard input (empty here): only a process of its own has one.
    const result = await run(["run", loop], [], { spawn: true });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("--input");
  });
});

describe("lllm run: more ways in", () => {
  it("runs a tactic by package ref", async () => {
    const result = await runCliInProcess(["run", "weather.tactics:weather", "-p", "packages-example/weather", "--model", "scripted:packages-example/weather/scripted/paris-tokyo.yaml", "--input", "Paris and Tokyo?"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("sunny in both cities");
  });

  it("reads --input-file", async () => {
    const result = await run(["run", loop, "--input-file", path.join(fixtures, "question.txt")], ["Yes."]);
    expect(result).toMatchObject({ code: 0, stdout: "Yes.\n" });
    expect(messagesOf(0).at(-1)!.content).toBe("Is it raining in Oslo?");
  });

  it("reads --input-file from a pipe (`-f <(cmd)`, a FIFO): it said such a file was a folder", async () => {
    const fifo = path.join(tempDir("lllm-fifo-"), "question");
    const { spawnSync } = await import("node:child_process");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const { writeFile } = await import("node:fs/promises");
    // The writer waits for the run to open the pipe for reading.
    const written = writeFile(fifo, "Is it raining in Bergen?\n");
    const result = await run(["run", loop, "--input-file", fifo], ["Yes."], { spawn: true });
    // A run that never read it (the failure this checks) leaves the writer waiting: the read end opened here frees it.
    const { closeSync, constants, openSync } = await import("node:fs");
    closeSync(openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK));
    await written.catch(() => undefined);
    expect(result).toMatchObject({ code: 0, stdout: "Yes.\n" });
    expect(messagesOf(0).at(-1)!.content).toBe("Is it raining in Bergen?");
  });

  it("Ctrl-C stops a run with exit 130 and leaves no output", async () => {
    server = await startMockOpenAIServer({ script: ["too late"], failures: [{ delayMs: 30_000 }] });
    const { spawn } = await import("node:child_process");
    const { BIN, emptyHome } = await import("../helpers/runCli.js");
    const child = spawn(process.execPath, [BIN, "run", loop, "--input", "Hi"], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: emptyHome(), OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, NO_COLOR: "1" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    // Wait until the request reached the server, then interrupt.
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(130);
    expect(stdout).toBe("");
    expect(stderr).toContain("interrupted");
  });
});

describe("the code-action example of docs/code-action.md", () => {
  it("answers seed 002's salary question with one sandboxed program and the exact sum", async () => {
    const result = await runCli(["run", "packages-example/company/tactics/salary.yaml", "--model", "scripted:packages-example/company/scripted/salary.yaml", "--input", "What is the combined salary of everyone in Engineering?", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { output: unknown; usage: { llm_calls: number }; code_action: { tool_calls: number; attempts: number } };
    expect(report.output).toBe(1031760);
    expect(report.usage.llm_calls).toBe(1);
    expect(report.code_action).toMatchObject({ tool_calls: 51, attempts: 1 });
    const programs = (report.code_action as unknown as { programs: Array<{ calls: object[] }> }).programs;
    expect([Object.keys(report), Object.keys(report.code_action), Object.keys(programs[0]!), Object.keys(programs[0]!.calls[0]!)]).toEqual([
      ["schema_version", "output", "usage", "tool_calls", "model_calls", "duration_ms", "code_action", "cost", ...("run_id" in report ? ["run_id"] : [])],
      ["tool_calls", "attempts", "programs", "error", "duration_ms"],
      ["attempt", "status", "tool_calls", "calls", "error", "duration_ms", "code"],
      ["tool", "arguments_digest", "status", "duration_ms"],
    ]);
  });
});

describe("the first command of the README and docs/getting-started.md", () => {
  it("runs the weather example offline with the scripted model, and says so", async () => {
    const result = await runCli(["run", "packages-example/weather/tactics/weather.yaml", "--model", "scripted:packages-example/weather/scripted/paris-tokyo.yaml", "--input", "What is the weather in Paris and Tokyo?"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.\n");
    expect(result.stderr).toContain("replaying the model's turns");
  });
});
