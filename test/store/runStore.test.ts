import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { BIN, ROOT, type CliResult } from "../helpers/runCli.js";
import { removeTempDirs, tempDir } from "../helpers/tempTree.js";
import { cli, cliInProcess, listRunsInProcess as listRuns, showRunInProcess as showRun } from "./storeTestHelpers.js";

const weather = path.join(ROOT, "packages-example/weather/tactics/weather.yaml");
const parisTokyo = path.join(ROOT, "packages-example/weather/scripted/paris-tokyo.yaml");
const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");
const KEY = "sk-test-Zq8vR2mK5pL9xW3n";
const PROXY_KEY = "wa-dev-7731-secret";

/** The CLI as user `uid` (undefined: this user), in `env` alone. */
function runAs(uid: number | undefined, args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], ...(uid !== undefined ? { uid, gid: uid } : {}) });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeTempDirs();
});

describe("the run store records runs", { timeout: 180_000 }, () => {
  it("records a scripted run with every model call and tool call", async () => {
    const home = tempDir();
    // The built CLI end to end: this run and the transcript below are spawns.
    const run = await cli(home, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "Paris and Tokyo?", "--no-stream", "--verbose"]);
    expect(run.code, run.stderr).toBe(0);
    // The --verbose summary: tokens, cost (nothing, for a scripted model: no provider is called), the run's id.
    expect(run.stderr).toMatch(/^lllm: 2 model calls, \d+ \+ \d+ tokens, \$0, [\d.]+ s · run [0-9A-Z]{26}$/m);
    expect(run.stdout).toBe("It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.\n");
    // Recorded into the spool, not into logs.db: the next reader merges it (a run never loads SQLite).
    expect(existsSync(path.join(home, "logs.db"))).toBe(false);

    const runs = await listRuns(home);
    expect(existsSync(path.join(home, "logs.db"))).toBe(true);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "ok", exit_code: 0, tactic_name: "weather", input: "Paris and Tokyo?", llm_calls: 2, cost: 0, output: "It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo." });

    const record = await showRun(home, "last");
    expect(record.model_calls.map((call) => [call.agent, call.round, call.tool_calls.map((request) => request.name)])).toEqual([
      ["weather_bot", 0, ["get_weather", "get_weather"]],
      ["weather_bot", 1, []],
    ]);
    expect(record.model_calls[0]!.messages.map((message) => message.role)).toEqual(["system", "user"]);
    expect(record.model_calls[1]!.messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool", "tool"]);
    expect(record.model_calls[1]!.reply).toBe("It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.");
    expect(record.tool_calls.map((call) => [call.name, call.arguments, call.status])).toEqual([
      ["get_weather", { city: "Paris" }, "ok"],
      ["get_weather", { city: "Tokyo" }, "ok"],
    ]);
    expect(record.tool_calls[0]!.result).toContain("Sunny, 22 degrees celsius in Paris");

    const transcript = await cli(home, ["logs", "show", record.id.slice(0, 20)]);
    expect(transcript.code, transcript.stderr).toBe(0);
    expect(transcript.stdout).toContain("[user] Paris and Tokyo?");
    expect(transcript.stdout).toContain("── tool get_weather");
    expect(transcript.stdout).toContain('arguments {"city":"Tokyo"}');
  });

  it("records a run against an OpenAI-compatible server, with its cost, and stores no API key in any encoding", async () => {
    const home = tempDir();
    server = await startMockOpenAIServer({
      script: [
        { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }], usage: { prompt_tokens: 1000, completion_tokens: 20 } },
        // A model that repeats the key it was shown must not get it into the log either.
        { text: `Sunny in Paris. (your key was ${KEY})`, usage: { prompt_tokens: 1200, completion_tokens: 30 } },
      ],
    });
    const run = await cliInProcess(home, ["run", loop, "--model", "gpt-4o-mini", "--input", `Weather in Paris? My key is ${KEY} and Basic ${Buffer.from(KEY).toString("base64")} and ${PROXY_KEY}`, "--json"], { env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url, WA_API_DEV: PROXY_KEY } });
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { cost: number; run_id: string; usage: Record<string, number> };
    // gpt-4o-mini: $0.15 input, $0.60 output per million tokens.
    expect(report.cost).toBeCloseTo((2200 * 0.15 + 50 * 0.6) / 1e6, 12);
    expect(report.usage).toMatchObject({ prompt_tokens: 2200, completion_tokens: 50, cached_prompt_tokens: 0, reasoning_tokens: 0 });

    const record = await showRun(home, report.run_id);
    expect(record).toMatchObject({ status: "ok", models: ["gpt-4o-mini"], prompt_tokens: 2200, completion_tokens: 50 });
    expect(record.cost).toBeCloseTo(report.cost, 12);
    expect(record.model_calls).toHaveLength(2);
    expect(record.tool_calls).toHaveLength(1);
    // WA_API_DEV does not look like a secret by its name: it is one because a built-in proxy takes its key from it.
    expect(record.input).toBe("Weather in Paris? My key is [redacted] and Basic [redacted] and [redacted]");
    expect(record.output).toBe("Sunny in Paris. (your key was [redacted])");

    const listing = await cliInProcess(home, ["logs"]);
    expect(listing.stdout).toContain("gpt-4o-mini");
    expect(listing.stdout).toContain("$0.00036");

    const forms = [KEY, PROXY_KEY, Buffer.from(KEY).toString("base64"), Buffer.from(KEY).toString("base64").replace(/=+$/, "")];
    for (const name of ["logs.db", "logs.db-wal"]) {
      const file = path.join(home, name);
      if (!existsSync(file)) continue;
      const bytes = readFileSync(file);
      for (const form of forms) expect(bytes.includes(Buffer.from(form)), `${name} holds ${form}`).toBe(false);
    }
  });

  it("records the retries before a model call's answer, with their causes, and shows them in the transcript", async () => {
    const home = tempDir();
    server = await startMockOpenAIServer({ failures: [{ status: 500, message: "The server is overloaded." }], script: ["Sunny."] });
    const run = await cliInProcess(home, ["run", loop, "--model", "gpt-4o-mini", "--input", "Weather?", "--json"], { env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url, LLLM_RETRY_DELAY_MS: "1" } });
    expect(run.code, run.stderr).toBe(0);
    const record = await showRun(home, (JSON.parse(run.stdout) as { run_id: string }).run_id);
    expect(record.model_calls).toHaveLength(1);
    expect(record.model_calls[0]!.retries).toEqual([{ attempt: 1, cause: expect.stringContaining("500") as unknown, wait_ms: expect.any(Number) as unknown }]);
    const transcript = await cliInProcess(home, ["logs", "show", "last"]);
    expect(transcript.stdout).toMatch(/\[retry\] attempt 1 failed \(.*500.*\)/);
  });

  it("redacts the key of an agent's invoker_config.api_key_env, whatever the variable's name", async () => {
    const home = tempDir();
    server = await startMockOpenAIServer({ script: ["Hello."] });
    const dir = tempDir();
    const tactic = path.join(dir, "keyed.yaml");
    writeFileSync(tactic, `name: keyed\nglobal:\n  model_name: gpt-test\n  invoker_config: {api_key_env: LLM_ACCESS, base_url: "${server.url}"}\nagent_configs:\n  - name: bot\n    system_prompt: Say hello.\n`);
    const run = await cliInProcess(home, ["run", tactic, "--input", "access is plain-word-access-77", "--no-stream"], { env: { LLM_ACCESS: "plain-word-access-77" } });
    expect(run).toMatchObject({ code: 0, stdout: "Hello.\n" });
    expect(server.requests.find((request) => request.method === "POST")!.headers.authorization).toBe("Bearer plain-word-access-77");
    expect((await showRun(home, "last")).input).toBe("access is [redacted]");
  });

  it("--no-log, LLLM_LOG=0 and `log: false` in the project settings record nothing", async () => {
    const home = tempDir();
    const args = ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "x", "--no-stream"];
    expect((await cliInProcess(home, [...args, "--no-log"])).code).toBe(0);
    expect((await cliInProcess(home, args, { env: { LLLM_LOG: "0" } })).code).toBe(0);
    const project = tempDir();
    writeFileSync(path.join(project, ".lllmrc.json"), JSON.stringify({ log: false }));
    expect((await cliInProcess(home, args, { cwd: project })).code).toBe(0);
    expect(existsSync(path.join(home, "logs.db"))).toBe(false);
    const none = await cliInProcess(home, ["logs"]);
    expect(none).toMatchObject({ code: 0, stdout: "" });
    expect(none.stderr).toContain("no runs logged yet");
  });

  it("a run goes on when the store is unusable: the log says how to fix it, and a home it cannot write gives one warning", async () => {
    const home = tempDir();
    // logs.db is a folder: it cannot be opened as a database.
    mkdirSync(path.join(home, "logs.db"));
    const unusable = await cliInProcess(home, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "x", "--no-stream"]);
    expect(unusable).toMatchObject({ code: 0, stdout: "It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.\n" });
    expect(unusable.stderr).not.toContain("warning");
    const listing = await cliInProcess(home, ["logs"]);
    expect(listing.code, listing.stderr).toBe(1);
    expect(listing.stderr).toContain(`the run log ${path.join(home, "logs.db")} cannot be read`);
    expect(listing.stderr).toContain("move it aside");
    // Recorded meanwhile: in the log once the folder is out of the way.
    rmSync(path.join(home, "logs.db"), { recursive: true });
    expect((await listRuns(home)).map((run) => run.input)).toEqual(["x"]);

    // A home this user cannot write: as root, run as nobody in a home of root's; else take the write bits away.
    const readOnly = tempDir();
    const root = process.getuid?.() === 0;
    const restore: Array<() => void> = [];
    for (let folder = readOnly; root && folder !== path.dirname(folder); folder = path.dirname(folder)) {
      const before = statSync(folder).mode & 0o7777;
      if ((before & 0o005) === 0o005) continue;
      chmodSync(folder, before | 0o005);
      restore.push(() => chmodSync(folder, before));
    }
    if (!root) chmodSync(readOnly, 0o500);
    try {
      const denied = await runAs(root ? 65534 : undefined, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "x", "--no-stream"], { PATH: process.env.PATH, HOME: readOnly, LLLM_HOME: readOnly, NO_COLOR: "1" });
      expect(denied.code, denied.stderr).toBe(0);
      expect(denied.stderr.match(/warning: the run log .* cannot be written/g)).toHaveLength(1);
    } finally {
      chmodSync(readOnly, 0o700);
      for (const undo of restore.reverse()) undo();
    }
  });

  it("a failed run is recorded with its status, exit code and error", async () => {
    const home = tempDir();
    const script = tempDir();
    // One turn only: the second model call finds none, a runtime error (exit 1).
    writeFileSync(path.join(script, "short.yaml"), "- tool_calls: [{name: get_weather, arguments: {city: Paris}}]\n");
    const run = await cliInProcess(home, ["run", weather, "--model", `scripted:${path.join(script, "short.yaml")}`, "--input", "x", "--no-stream"]);
    expect(run.code, run.stderr).toBe(1);
    const [record] = await listRuns(home);
    expect(record).toMatchObject({ status: "error", exit_code: 1, error_code: "provider_script_exhausted", output: null });
    expect(record!.error_message).toContain("no scripted turn left");

    // Still asking for tools after its one round: the round budget is spent (exit 3).
    writeFileSync(path.join(script, "greedy.yaml"), "- tool_calls: [{name: get_weather, arguments: {city: Paris}}]\n- tool_calls: [{name: get_weather, arguments: {city: Rome}}]\n");
    const budget = await cliInProcess(home, ["run", weather, "--model", `scripted:${path.join(script, "greedy.yaml")}`, "--input", "x", "--no-stream", "--max-steps", "1"]);
    expect(budget.code, budget.stderr).toBe(3);
    expect((await listRuns(home, ["-n", "1"]))[0]).toMatchObject({ status: "budget", exit_code: 3, error_code: "tool_rounds_exhausted" });
    expect(await listRuns(home, ["--status", "error"])).toHaveLength(1);
  });
});

describe("code-action runs", { timeout: 180_000 }, () => {
  it("keep their programs and every bridged call", async () => {
    const home = tempDir();
    // A spawn: the program runs in a kernel, a child process of the CLI's.
    const run = await cli(home, ["run", "packages-example/company/tactics/salary.yaml", "--model", "scripted:packages-example/company/scripted/salary.yaml", "--input", "What is the combined salary of everyone in Engineering?"]);
    expect(run).toMatchObject({ code: 0, stdout: "1031760\n" });
    const record = await showRun(home, "last");
    expect(record.output).toBe(1031760);
    const report = record.details?.code_action as { attempts: number; programs: Array<{ code: string; calls: unknown[] }> };
    expect(report.attempts).toBe(1);
    expect(report.programs[0]!.calls).toHaveLength(51);
    expect(report.programs[0]!.code).toContain("final_answer(total)");
    const transcript = await cliInProcess(home, ["logs", "show", "last"]);
    expect(transcript.stdout).toContain("── program (attempt 1) · ok · 51 bridged calls");
    // One model call, said in the singular.
    expect(transcript.stdout).toMatch(/ · 1 call · /);
    const replay = await cliInProcess(home, ["logs", "replay", "last", "-o", path.join(tempDir(), "replay.yaml")]);
    expect(replay.stderr).toContain("lllm: wrote 1 turn to ");
    // Every line of the program at one indent, under its heading.
    const block = transcript.stdout.slice(transcript.stdout.indexOf("── program (attempt 1)")).split("\n\n")[0]!.split("\n").slice(1);
    expect(block).toEqual(report.programs[0]!.code.trimEnd().split("\n").map((line) => `  ${line}`));
  });

  it("show each tool_chain script under the call that ran it, every line at one indent", async () => {
    const home = tempDir();
    const dir = tempDir();
    writeFileSync(path.join(dir, "turns.yaml"), [
      "- tool_calls:",
      "    - name: tool_chain",
      "      arguments:",
      "        code: |",
      "          names = list_employees()",
      "          final_answer(len(names))",
      "- tool_calls:",
      "    - name: tool_chain",
      "      arguments:",
      "        code: |",
      "          first = list_employees()[0]",
      "          raise ValueError(first)",
      "- text: There are 50 employees.",
      "",
    ].join("\n"));
    // A spawn, as above: the scripts run in a kernel of the CLI's.
    const run = await cli(home, ["run", path.join(ROOT, "test/fixtures/codeaction/chain.yaml"), "--model", `scripted:${path.join(dir, "turns.yaml")}`, "--input", "How many?"]);
    expect(run).toMatchObject({ code: 0, stdout: "There are 50 employees.\n" });
    const transcript = (await cliInProcess(home, ["logs", "show", "last"])).stdout;
    const blocks = transcript.split("\n\n");
    const chainCalls = blocks.filter((block) => block.startsWith("── tool tool_chain"));
    expect(chainCalls).toHaveLength(2);
    expect(chainCalls[0]).toMatch(/\n {2}── program · ok · 1 bridged call · [^\n]+\n {4}names = list_employees\(\)\n {4}final_answer\(len\(names\)\)$/);
    expect(chainCalls[1]).toMatch(/\n {2}── program · error · 1 bridged call · [^\n]+\n {4}first = list_employees\(\)\[0\]\n {4}raise ValueError\(first\)\n {4}error [^\n]*(\n {6}[^\n]*)*ValueError/);
    // Each right after its call, before the next model call; none left over at the end.
    expect(blocks.indexOf(chainCalls[0]!)).toBeLessThan(blocks.findIndex((block) => block.startsWith("── model call 2")));
    expect(blocks.indexOf(chainCalls[1]!)).toBeLessThan(blocks.findIndex((block) => block.startsWith("── model call 3")));
    expect(transcript).not.toMatch(/^── program/m);
  });
});

describe("lllm logs", { timeout: 180_000 }, () => {
  it("lists newest first with -n, --tactic, --status, --since and --search; prune deletes old runs; path names the file", async () => {
    const home = tempDir();
    for (const input of ["first about Lisbon", "second about Oslo"]) {
      expect((await cliInProcess(home, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", input, "--no-stream"])).code).toBe(0);
    }
    const all = await listRuns(home);
    expect(all.map((run) => run.input)).toEqual(["second about Oslo", "first about Lisbon"]);
    expect((await listRuns(home, ["-n", "1"])).map((run) => run.input)).toEqual(["second about Oslo"]);
    expect((await listRuns(home, ["--search", "lisbon"])).map((run) => run.input)).toEqual(["first about Lisbon"]);
    expect(await listRuns(home, ["--search", "sunny cities"])).toHaveLength(2);
    expect(await listRuns(home, ["--tactic", "weather"])).toHaveLength(2);
    expect(await listRuns(home, ["--tactic", "other"])).toHaveLength(0);
    expect(await listRuns(home, ["--status", "ok", "--since", "1h"])).toHaveLength(2);

    const table = await cliInProcess(home, ["logs"]);
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+WHEN\s+TACTIC\s+STATUS\s+MODEL\s+TOKENS\s+COST\s+DURATION$/);
    expect(table.stdout).toContain(all[0]!.id);

    const bad = await cliInProcess(home, ["logs", "--since", "yesterday"]);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toContain("--since `yesterday` is not an age");
    const missing = await cliInProcess(home, ["logs", "show", "NOSUCHRUN"]);
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain("no run `NOSUCHRUN`");

    expect((await cliInProcess(home, ["logs", "path"])).stdout).toBe(`${path.join(home, "logs.db")}\n`);
    const keep = await cliInProcess(home, ["logs", "prune", "--older-than", "30d"]);
    expect(keep.stderr).toContain("deleted 0 runs");
    // The list's filters narrow what prune deletes (they were ignored: every old run went); --dry-run deletes none.
    const dry = await cliInProcess(home, ["logs", "prune", "--older-than", "0s", "--search", "lisbon", "--dry-run"]);
    expect(dry.stdout).toContain(all[1]!.id);
    expect(dry.stdout).not.toContain(all[0]!.id);
    expect(dry.stderr).toContain("would delete 1 run older than 0s that match (--dry-run: nothing deleted)");
    expect(await listRuns(home)).toHaveLength(2);
    expect((await cliInProcess(home, ["logs", "prune", "--older-than", "0s", "--status", "error"])).stderr).toContain("deleted 0 runs older than 0s that match");
    expect((await cliInProcess(home, ["logs", "prune", "--older-than", "0s", "--tactic", "other"])).stderr).toContain("deleted 0 runs");
    // A tactic is matched by its name, path or file name, not a part of one (`eather.yaml` is not `weather.yaml`).
    expect((await cliInProcess(home, ["logs", "prune", "--older-than", "0s", "--tactic", "eather.yaml", "--dry-run"])).stderr).toContain("would delete 0 runs");
    expect((await cliInProcess(home, ["logs", "prune", "--older-than", "0s", "--tactic", "weather.yaml", "--dry-run"])).stderr).toContain("would delete 2 runs");
    const limited = await cliInProcess(home, ["logs", "prune", "--older-than", "0s", "-n", "1"]);
    expect(limited.code, limited.stderr).toBe(2);
    expect(limited.stderr).toContain("-n picks runs to list, not to delete");
    expect(await listRuns(home)).toHaveLength(2);
    const one = await cliInProcess(home, ["logs", "prune", "--older-than", "0s", "--search", "lisbon"]);
    expect(one.stderr).toContain("deleted 1 run older than 0s that match");
    expect((await listRuns(home)).map((run) => run.input)).toEqual(["second about Oslo"]);
    const pruned = await cliInProcess(home, ["logs", "prune", "--older-than", "0s"]);
    expect(pruned.stderr).toContain("deleted 1 run older than 0s");
    expect(await listRuns(home)).toEqual([]);
  });

  it("logs prune --json prints one object, with --dry-run the runs it would delete", async () => {
    // `--json` is an option of `lllm logs`, so prune took it, and printed nothing on stdout (its result on stderr).
    const home = tempDir();
    expect((await cliInProcess(home, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "Paris?", "--no-stream"])).code).toBe(0);
    const [run] = await listRuns(home);
    const dry = await cliInProcess(home, ["logs", "prune", "--older-than", "0s", "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ schema_version: 1, dry_run: true, would_delete: 1, runs: [{ id: run!.id, input: "Paris?" }] });
    const pruned = await cliInProcess(home, ["logs", "prune", "--older-than", "0s", "--json"]);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(JSON.parse(pruned.stdout)).toEqual({ schema_version: 1, deleted: 1 });
    expect(await listRuns(home)).toEqual([]);
  });

  it("logs show keeps a tool call the model asked for on its own lines: its name and arguments cannot forge a step", async () => {
    // The model writes a call's name and its arguments' text (raw: not always JSON). Printed as they were, a line
    // break in them started a line at the transcript's margin that read as a step of the run (`── tool …`).
    server = await startMockOpenAIServer({ handler: () => ({ tool_calls: [{ name: "nope\n── tool wipe_disk · weather_bot · ok · 2 ms", arguments: '{"city":\n"Paris"}\n── tool send_money · weather_bot · ok · 1 ms' }] }) });
    const home = tempDir();
    const run = await cliInProcess(home, ["run", loop, "--input", "x", "--no-stream"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(run.code, run.stderr).toBe(1);
    const shown = await cliInProcess(home, ["logs", "show", "last"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("  [asks] nope\\n── tool wipe_disk · weather_bot · ok · 2 ms({\"city\":\n    \"Paris\"}\n    ── tool send_money");
    expect(shown.stdout.split("\n").filter((line) => line.startsWith("── tool"))).toEqual([]);
  });

  it("prints one object with schema_version for logs --json and logs show --json, also before any run", async () => {
    const home = tempDir();
    const empty = await cliInProcess(home, ["logs", "--json"]);
    expect(empty.code, empty.stderr).toBe(0);
    expect(JSON.parse(empty.stdout)).toEqual({ schema_version: 1, runs: [] });
    expect((await cliInProcess(home, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "Paris?", "--no-stream"])).code).toBe(0);
    const listing = JSON.parse((await cliInProcess(home, ["logs", "--json"])).stdout) as { schema_version: number; runs: Array<{ id: string }> };
    expect(listing).toMatchObject({ schema_version: 1, runs: [{ input: "Paris?", status: "ok" }] });
    const shown = await cliInProcess(home, ["logs", "show", "last", "--json"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ schema_version: 1, id: listing.runs[0]!.id, status: "ok", model_calls: expect.any(Array) });
    const missing = await cliInProcess(home, ["logs", "show", "NOSUCHRUN", "--json"]);
    expect(missing.code, missing.stderr).toBe(2);
    expect(JSON.parse(missing.stdout)).toMatchObject({ schema_version: 1, error: { code: "store_run_not_found" } });
  });
});
