import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { EXAMPLE, ROOT, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempTree } from "../helpers/tempTree.js";

/** Every `--json` command prints exactly one JSON object on stdout, on failure too, with a schema_version. */
let server: MockOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const tree = (files: Record<string, string>): string => tempTree(files, "lllm-json-");

interface Failure {
  schema_version: number;
  error: { code: string; message: string; hint: string | null; file?: string; line?: number | null };
  [key: string]: unknown;
}

const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");

describe("--json on failure", () => {
  it("run: a model that calls an unknown tool gives {schema_version, error, usage} and exit 1; the hint names the YAML key", async () => {
    server = await startMockOpenAIServer({ script: [{ tool_calls: [{ name: "get_wether", arguments: {} }] }] });
    const result = await runCli(["run", loop, "--input", "hi", "--json"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(result.code, result.stderr).toBe(1);
    const failure = JSON.parse(result.stdout) as Failure;
    expect(failure).toMatchObject({ schema_version: 1, output: null, error: { code: "unknown_tool" }, usage: { llm_calls: 1 } });
    expect(failure.error.hint).toContain("`tools:`");
    expect(result.stderr).toContain("`tools:` list in the tactic file");
    expect(result.stderr).not.toMatch(/^[^\n]*functionList/); // the first thing a YAML user reads is YAML
  });

  it("run: a configuration error before the run is one object too, with file and line", async () => {
    const dir = tree({ "tactic.yaml": "name: t\ntactic_type: agnet\nagent_configs:\n  - name: bot\n    model_name: m\n    system_prompt: hi\n" });
    const result = await runCliInProcess(["run", "tactic.yaml", "--input", "x", "--json"], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    const failure = JSON.parse(result.stdout) as Failure;
    expect(failure).toMatchObject({ schema_version: 1, error: { code: "tactic_unbound", file: "tactic.yaml", line: 2 } });
    expect(failure.error.message).toContain("did you mean `agent`?");
  });

  it("validate: {schema_version, valid: false, error, problems}; success has schema_version too", async () => {
    const dir = tree({ "tactic.yaml": "tactic_typ: agent\nagent_configs:\n  - name: bot\n    model_name: m\n    system_prompt: hi\n    modle_args: {}\n" });
    const bad = await runCliInProcess(["validate", "tactic.yaml", "--json"], { cwd: dir });
    expect(bad.code, bad.stderr).toBe(2);
    const failure = JSON.parse(bad.stdout) as Failure & { problems: Array<{ message: string; line: number }> };
    expect(failure).toMatchObject({ schema_version: 1, valid: false });
    expect(failure.problems.map((problem) => problem.line)).toEqual([1, 6]);
    const good = await runCliInProcess(["validate", path.join(EXAMPLE, "weather/tactics/weather.yaml"), "--json"]);
    expect(JSON.parse(good.stdout)).toMatchObject({ schema_version: 1, valid: true });
  });

  it("tools call: a failing tool gives the same shape", async () => {
    const result = await runCliInProcess(["tools", "call", "forecast", "-p", path.join(EXAMPLE, "weather"), "--args", '{"city": "Oslo", "days": 0}', "--json"]);
    expect(result.code, result.stderr).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ schema_version: 1, error: { code: "tool_failed", message: "days must be at least 1", hint: null } });
  });

  it("a usage error with --json is an object too", async () => {
    const result = await runCliInProcess(["run", loop, "--json", "--no-such-flag"]);
    expect(result.code, result.stderr).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ schema_version: 1, error: { code: "usage", message: "unknown option '--no-such-flag'" } });
  });
});

describe("-f - reads the input from standard input", () => {
  it("run -f - takes the piped text", async () => {
    server = await startMockOpenAIServer({ script: ["Got it."] });
    const result = await runCli(["run", loop, "-f", "-"], { input: "piped question\n", env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(result).toMatchObject({ code: 0, stdout: "Got it.\n" });
    const messages = server.requests.filter((request) => request.method === "POST")[0]!.body.messages as Array<{ role: string; content: string }>;
    expect(messages.at(-1)).toEqual({ role: "user", content: "piped question" });
  });
});
