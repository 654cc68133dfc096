import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { BIN, ROOT } from "../helpers/runCli.js";
import { leaksOf } from "../helpers/secretEncodings.js";
import { removeTempDirs, tempDir } from "../helpers/tempTree.js";
import { cli, cliInProcess, listRunsInProcess as listRuns, showRunInProcess as showRun } from "./storeTestHelpers.js";

const weather = path.join(ROOT, "packages-example/weather/tactics/weather.yaml");
const parisTokyo = path.join(ROOT, "packages-example/weather/scripted/paris-tokyo.yaml");

// The reads of the log, and the runs that need no process of their own, run in this process (`cliInProcess`).
// Spawns (`cli`) stay where a process is the point: a run after its tool's file changed (this process keeps the
// module it loaded first), the runs in parallel, the signals; and one `lllm logs replay`, end to end.
let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeTempDirs();
});

/** A tactic over one package tool, `stamp`, whose answer the test can change. */
function stampProject(version: string): { dir: string; tactic: string; setVersion: (next: string) => void } {
  const dir = tempDir("lllm-replay-");
  mkdirSync(path.join(dir, "pkg", "tools"), { recursive: true });
  const setVersion = (next: string): void =>
    writeFileSync(path.join(dir, "pkg", "tools", "stamp.ts"), `import { tool } from "lllm";\nexport default tool({ name: "stamp", description: "Stamp a word", parameters: { word: { type: "string" } }, run: ({ word }) => \`${next}:\${word}\` });\n`);
  setVersion(version);
  const tactic = path.join(dir, "stamped.yaml");
  writeFileSync(tactic, "name: stamped\npackages: [./pkg]\nglobal:\n  model_name: gpt-test\n  tools: [stamp]\nagent_configs:\n  - name: bot\n    system_prompt: You stamp words.\n");
  return { dir, tactic, setVersion };
}

/** A writer agent whose tool is a nested tactic (agent `summarizer`, tool `word_stats`, whose answer can change). */
function nestedProject(stats: string): { dir: string; tactic: string; setStats: (next: string) => void } {
  const dir = tempDir("lllm-replay-nested-");
  mkdirSync(path.join(dir, "pkg", "tools"), { recursive: true });
  mkdirSync(path.join(dir, "pkg", "tactics"), { recursive: true });
  writeFileSync(path.join(dir, "pkg", "lllm.yaml"), "name: pkg\n");
  const setStats = (next: string): void =>
    writeFileSync(path.join(dir, "pkg", "tools", "word_stats.ts"), `import { tool } from "lllm";\nexport default tool({ name: "word_stats", description: "Count words", parameters: { text: { type: "string" } }, run: () => ${JSON.stringify(next)} });\n`);
  setStats(stats);
  writeFileSync(path.join(dir, "pkg", "tactics", "summarize.yaml"), "name: summarize\ndescription: Summarize a text.\nglobal:\n  model_name: gpt-test\nagent_configs:\n  - name: summarizer\n    system_prompt: You summarize texts.\n    tools: [word_stats]\n");
  const tactic = path.join(dir, "writer.yaml");
  writeFileSync(tactic, "name: writer\npackages: [./pkg]\nglobal:\n  model_name: gpt-test\nagent_configs:\n  - name: writer\n    system_prompt: You write.\n    tools: [pkg.tactics:summarize]\n");
  return { dir, tactic, setStats };
}

describe("lllm logs replay", { timeout: 180_000 }, () => {
  it("replays a run recorded against a server offline, with the same output; a changed tool fails naming the turn", async () => {
    const home = tempDir();
    const project = stampProject("v1");
    server = await startMockOpenAIServer({
      script: [
        { tool_calls: [{ name: "stamp", arguments: { word: "alpha" } }] },
        { tool_calls: [{ name: "stamp", arguments: { word: "beta" } }] },
        "Stamped alpha and beta.",
      ],
    });
    const recorded = await cliInProcess(home, ["run", project.tactic, "--input", "stamp alpha, then beta", "--no-stream"], { env: { OPENAI_API_KEY: "k-recording", OPENAI_BASE_URL: server.url } });
    expect(recorded).toMatchObject({ code: 0, stdout: "Stamped alpha and beta.\n" });
    await server.close();
    server = undefined;

    const script = path.join(project.dir, "replay.yaml");
    const written = await cli(home, ["logs", "replay", "last", "-o", script]);
    expect(written.code, written.stderr).toBe(0);
    expect(written.stderr).toContain("wrote 3 turns");

    // Offline: no key, no server; the tool runs for real.
    const replayed = await cliInProcess(home, ["run", project.tactic, "--model", `scripted:${script}`, "--input", "stamp alpha, then beta", "--no-stream"]);
    expect(replayed.stderr).not.toContain("error");
    expect(replayed).toMatchObject({ code: 0, stdout: recorded.stdout });
    const record = await showRun(home, "last");
    expect(record.tool_calls.map((call) => call.result)).toEqual([expect.stringContaining("v1:alpha"), expect.stringContaining("v1:beta")]);

    project.setVersion("v2");
    // A spawn: this process still holds the tool's first version, a new one loads the changed file.
    const diverged = await cli(home, ["run", project.tactic, "--model", `scripted:${script}`, "--input", "stamp alpha, then beta", "--no-stream"]);
    expect(diverged.code, diverged.stderr).toBe(1);
    expect(diverged.stdout).toBe("");
    expect(diverged.stderr).toContain("the replay diverged at agent `bot`'s turn 2 of 3");
    expect(diverged.stderr).toContain('message 4 (the result of stamp({"word":"alpha"})) differs:');
    expect(diverged.stderr).toMatch(/- v1:alpha\n\s+\+ v2:alpha/);
    expect(diverged.stderr).toContain("record a new run and write its script again with `lllm logs replay`");
  });

  it("redacts a key it knows now from the script, written to a file or printed, and the script still replays", async () => {
    // The run printed a key before lllm knew it was one: the record holds it as it is. `-o` wrote it to the file so,
    // and on stdout the redaction of the finished YAML made an answer that was the key alone a list.
    const key = "sk-replay-Zq8vR2mK5pL9xW3n";
    const home = tempDir();
    const project = stampProject("v1");
    server = await startMockOpenAIServer({ script: [key] });
    // A spawn: this process's redactor keeps every key it was given (the calls below give it this one), and would
    // redact the answer before the record had it.
    const recorded = await cli(home, ["run", project.tactic, "--input", "your key?", "--no-stream"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(recorded).toMatchObject({ code: 0, stdout: `${key}\n` });

    const file = path.join(project.dir, "replay.yaml");
    const written = await cliInProcess(home, ["logs", "replay", "last", "-o", file], { env: { OPENAI_API_KEY: key } });
    expect(written.code, written.stderr).toBe(0);
    const printed = await cliInProcess(home, ["logs", "replay", "last"], { env: { OPENAI_API_KEY: key } });
    expect(printed.code, printed.stderr).toBe(0);
    const stdoutScript = path.join(project.dir, "printed.yaml");
    writeFileSync(stdoutScript, printed.stdout);
    for (const script of [file, stdoutScript]) {
      expect(leaksOf(readFileSync(script, "utf8"), key)).toEqual([]);
      const replayed = await cliInProcess(home, ["run", project.tactic, "--model", `scripted:${script}`, "--input", "your key?", "--no-stream", "--no-log"]);
      expect(replayed.stderr).not.toContain("error");
      expect(replayed).toMatchObject({ code: 0, stdout: "[redacted]\n" });
    }
  });

  it("-o naming a folder or a file in a missing folder says so (exit 2), not an internal error", async () => {
    const home = tempDir();
    expect((await cliInProcess(home, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "Paris?", "--no-stream"])).code).toBe(0);
    const dir = tempDir();
    const folder = await cliInProcess(home, ["logs", "replay", "last", "-o", dir]);
    expect(folder).toMatchObject({ code: 2, stdout: "" });
    expect(folder.stderr).toBe(`lllm: error: -o ${dir}: that is a folder, not a file\n  Name a file, e.g. -o ${path.join(dir, "replay.yaml")}\n`);
    const missing = await cliInProcess(home, ["logs", "replay", "last", "-o", path.join(dir, "no", "replay.yaml")]);
    expect(missing).toMatchObject({ code: 2, stdout: "" });
    expect(missing.stderr).toContain(`lllm: error: -o ${path.join(dir, "no", "replay.yaml")}: there is no folder ${path.join(dir, "no")}\n`);
    expect(missing.stderr).not.toContain("internal error");
  });

  it("--json gives one object from logs path and logs replay (the script in it, or the file it went to)", async () => {
    const home = tempDir();
    expect((await cliInProcess(home, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "Paris?", "--no-stream"])).code).toBe(0);
    const where = await cliInProcess(home, ["logs", "path", "--json"]);
    expect(where.code, where.stderr).toBe(0);
    expect(JSON.parse(where.stdout)).toEqual({ schema_version: 1, path: path.join(home, "logs.db") });
    const printed = await cliInProcess(home, ["logs", "replay", "last", "--json"]);
    expect(printed.code, printed.stderr).toBe(0);
    const script = (await cliInProcess(home, ["logs", "replay", "last"])).stdout;
    expect(JSON.parse(printed.stdout)).toMatchObject({ schema_version: 1, run_id: expect.any(String), turns: 2, agents: 1, script });
    const file = path.join(tempDir(), "replay.yaml");
    const written = await cliInProcess(home, ["logs", "replay", "last", "-o", file, "--json"]);
    expect(written.code, written.stderr).toBe(0);
    expect(JSON.parse(written.stdout)).toMatchObject({ schema_version: 1, turns: 2, file });
    expect(readFileSync(file, "utf8")).toBe(script);
  });

  it("replays a run of two agents, one a tactic the other uses as a tool; a changed nested tool fails with its diff", async () => {
    const home = tempDir();
    const project = nestedProject("4 words");
    server = await startMockOpenAIServer({
      script: [
        { tool_calls: [{ name: "summarize", arguments: { task: "the quick brown fox" } }] },
        { tool_calls: [{ name: "word_stats", arguments: { text: "the quick brown fox" } }] },
        "A fox, 4 words.",
        "Summary: a fox.",
      ],
    });
    const args = ["run", project.tactic, "--input", "summarize the quick brown fox", "--no-stream"];
    const recorded = await cliInProcess(home, args, { env: { OPENAI_API_KEY: "k-recording", OPENAI_BASE_URL: server.url } });
    expect(recorded).toMatchObject({ code: 0, stdout: "Summary: a fox.\n" });
    await server.close();
    server = undefined;

    const script = path.join(project.dir, "replay.yaml");
    const written = await cliInProcess(home, ["logs", "replay", "last", "-o", script]);
    expect(written).toMatchObject({ code: 0 });
    expect(written.stderr).toContain("wrote 4 turns of 2 agents");
    expect(written.stderr).not.toContain("warning");

    const replayed = await cliInProcess(home, [...args.slice(0, 2), "--model", `scripted:${script}`, ...args.slice(2)]);
    expect(replayed.stderr).not.toContain("error");
    expect(replayed).toMatchObject({ code: 0, stdout: recorded.stdout });
    const record = await showRun(home, "last");
    // The nested tactic's agent under the tool that runs it, as usage.by_agent names it.
    expect(record.model_calls.map((call) => call.agent)).toEqual(["writer", "summarize/summarizer", "summarize/summarizer", "writer"]);

    project.setStats("4 words!");
    // A spawn, for the changed tool file (as above).
    const diverged = await cli(home, [...args.slice(0, 2), "--model", `scripted:${script}`, ...args.slice(2)]);
    expect(diverged).toMatchObject({ code: 1, stdout: "" });
    // The cause, in the nested agent, not its echo in the writer's tool result.
    expect(diverged.stderr).toContain("the replay diverged at agent `summarize/summarizer`'s turn 2 of 2");
    expect(diverged.stderr).toContain('message 4 (the result of word_stats({"text":"the quick brown fox"})) differs:');
    expect(diverged.stderr).toMatch(/- 4 words\n\s+\+ 4 words!/);
  });

  it("still replays a one-list script of a two-agent run, written before scripts were kept by agent, in call order", async () => {
    const project = nestedProject("4 words");
    const script = path.join(project.dir, "old.yaml");
    const result = (text: string, name: string, args: string): string => `Return of calling function ${name} with arguments ${args}:\n---\n${text}\n---`;
    writeFileSync(
      script,
      JSON.stringify({
        run: "01OLD",
        turns: [
          { tool_calls: [{ id: "call_1_0", name: "summarize", arguments: { task: "the quick brown fox" }, result: result("A fox, 4 words.", "summarize", "{'task': 'the quick brown fox'}") }] },
          { tool_calls: [{ id: "call_2_0", name: "word_stats", arguments: { text: "the quick brown fox" }, result: result("4 words", "word_stats", "{'text': 'the quick brown fox'}") }] },
          { text: "A fox, 4 words." },
          { text: "Summary: a fox." },
        ],
      }),
    );
    const replayed = await cliInProcess(tempDir(), ["run", project.tactic, "--model", `scripted:${script}`, "--input", "summarize the quick brown fox", "--no-stream"]);
    expect(replayed.stderr).not.toContain("error");
    expect(replayed).toMatchObject({ code: 0, stdout: "Summary: a fox.\n" });
  });
});

describe("the store under concurrency and crashes", { timeout: 180_000 }, () => {
  it("20 runs in parallel into one store: 20 complete records, no lock error", async () => {
    const home = tempDir();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => cli(home, ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", `parallel ${index}`, "--no-stream"], { timeoutMs: 170_000 })),
    );
    for (const result of results) {
      expect(result.stderr).not.toMatch(/locked|busy|warning/i);
      expect(result.code, result.stderr).toBe(0);
    }
    const runs = await listRuns(home, ["-n", "100"]);
    expect(runs).toHaveLength(20);
    expect(new Set(runs.map((run) => run.input))).toEqual(new Set(Array.from({ length: 20 }, (_, index) => `parallel ${index}`)));
    for (const run of runs) expect(run).toMatchObject({ status: "ok", llm_calls: 2 });
    const record = await showRun(home, runs[7]!.id);
    expect(record.model_calls).toHaveLength(2);
    expect(record.tool_calls).toHaveLength(2);
  });

  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("a run stopped with %s is recorded as interrupted, exit %i", async (signal, exitCode) => {
    const home = tempDir();
    server = await startMockOpenAIServer({ script: ["too late"], failures: [{ delayMs: 60_000 }] });
    const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");
    const child = spawn(process.execPath, [BIN, "run", loop, "--input", "Hi"], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: home, OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, NO_COLOR: "1" }, stdio: "ignore" });
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill(signal);
    expect(await closed).toBe(exitCode);
    expect((await listRuns(home))[0]).toMatchObject({ status: "interrupted", exit_code: exitCode, input: "Hi" });
  });

  it("a run killed with SIGKILL shows as crashed", async () => {
    const home = tempDir();
    server = await startMockOpenAIServer({ script: ["too late"], failures: [{ delayMs: 60_000 }] });
    const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");
    const child = spawn(process.execPath, [BIN, "run", loop, "--input", "Hi"], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: home, OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, NO_COLOR: "1" }, stdio: "ignore" });
    const closed = new Promise((resolve) => child.on("close", resolve));
    // The run's start is on disk a moment after it begins: while the request waits for its answer, it lists as running.
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await expect.poll(async () => (await listRuns(home))[0]?.status, { timeout: 60_000, interval: 200 }).toBe("running");
    child.kill("SIGKILL");
    await closed;
    const [run] = await listRuns(home);
    expect(run).toMatchObject({ status: "crashed", input: "Hi", ended_at: null });
    expect((await cliInProcess(home, ["logs", "--status", "crashed"])).stdout).toContain(run!.id);
  });
});
