import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import type { MockRequestBody } from "../../src/testing/RecordedRequest.js";
import type { ScriptedTurn } from "../../src/providers/ScriptedTurn.js";
import { BIN, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { tempDir } from "../helpers/tempTree.js";
import { weatherProject } from "../helpers/weatherProject.js";
import { EXAMPLE } from "../helpers/paths.js";

// The example's stand-in model (the one the README's walk starts): it answers from what it is sent.
const { answer } = (await import(path.join(EXAMPLE, "weather/tests/mock-model.mjs"))) as { answer: (body: MockRequestBody) => ScriptedTurn };

const KEY = "sk-test-Vb7kQ2zX9mN4pL8r";

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The example model, and a judge: a request that asks for a grade gets one. */
function model(body: MockRequestBody): ScriptedTurn {
  const system = String(body.messages?.[0]?.["content"] ?? "");
  if (system.startsWith("You grade")) return '{"pass": true, "score": 0.9, "reason": "Both cities and their temperatures are named."}';
  return answer(body);
}

function lllm(home: string, args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string) {
  return runCli(args, { timeoutMs: 170_000, env: { LLLM_HOME: home, ...env }, ...(cwd ? { cwd } : {}) });
}

/**
 * The CLI's main() in this process, as `lllm` runs the built CLI: for the runs that depend on no process of their own.
 * The recording (its cassettes must not hold the key), `logs`, `run` and the runs after a tool's code changed (a
 * process imports a module once) go through the built CLI.
 */
function inProcess(home: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return runCliInProcess(args, { env: { LLLM_HOME: home, ...env } });
}

describe("lllm test: record once, replay offline", { timeout: 400_000 }, () => {
  it("records cassettes against a server, replays them with no key and no network, and fails the right case with a diff when a tool breaks", async () => {
    const home = tempDir();
    const project = weatherProject();
    // A judge, recorded in its case's cassette with the tactic's own calls.
    const testFile = path.join(project.tests, "weather.test.yaml");
    writeFileSync(testFile, readFileSync(testFile, "utf8").replace("      - javascript: ./checks/answerIsShort.ts\n", "      - javascript: ./checks/answerIsShort.ts\n      - judge: {rubric: Names both cities and a temperature for each, model: gpt-4o-mini}\n"));
    server = await startMockOpenAIServer({ handler: model });
    const recorded = await lllm(home, ["test", project.tests, "--record"], { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url });
    expect(recorded.stderr).toContain("lllm test: 3 cases in 1 file (to record 3)");
    expect(recorded.stderr).toMatch(/✓ .*weather\.test\.yaml › two cities {2}\(recorded, /);
    expect(recorded.stderr).toContain("Tests: 3 passed (3 cases)");
    expect(recorded).toMatchObject({ code: 0, stdout: "" });
    expect(readdirSync(project.cassettes).sort()).toEqual(["a-conversation.yaml", "asks-for-a-city.yaml", "two-cities.yaml"]);
    const twoCities = readFileSync(path.join(project.cassettes, "two-cities.yaml"), "utf8");
    expect(twoCities).toContain("tactic: weather\n");
    expect(twoCities).toContain("  (judge):\n");
    for (const file of readdirSync(project.cassettes)) expect(readFileSync(path.join(project.cassettes, file), "utf8")).not.toContain(KEY.slice(3));
    const calls = server.requests.length;
    await server.close();
    server = undefined;

    // Offline: no key, no server. The JSON report on stdout, the JUnit file for CI.
    const junit = path.join(tempDir(), "reports", "junit.xml");
    const replayed = await inProcess(home, ["test", project.tests, "--offline", "--json", "--junit", junit]);
    expect(replayed.stderr).toContain("(replay 3)");
    expect(replayed.code, replayed.stderr).toBe(0);
    const report = JSON.parse(replayed.stdout) as { schema_version: number; ok: boolean; summary: { passed: number; failed: number; cost: number }; cases: Array<{ name: string; mode: string; status: string; run_ids: string[]; assertions: Array<{ type: string; pass: boolean }> }> };
    expect(report).toMatchObject({ schema_version: 1, ok: true, summary: { passed: 3, failed: 0 } });
    expect(report.summary.cost).toBeGreaterThan(0); // recorded usage, priced as gpt-4o-mini
    expect(report.cases.map((entry) => [entry.name, entry.mode, entry.status])).toEqual([
      ["two cities", "replay", "passed"],
      ["a conversation", "replay", "passed"],
      ["asks for a city", "replay", "passed"],
    ]);
    expect(report.cases[0]!.assertions.find((entry) => entry.type === "judge")).toMatchObject({ pass: true });
    const xml = readFileSync(junit, "utf8");
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="lllm test" tests="3" failures="0" errors="0" skipped="0"/);
    expect(xml).toContain('<testcase classname="');
    expect(xml).toContain('name="a conversation"');

    // Every case's run is in the run store with its test file and case name; a conversation is two runs.
    const logs = JSON.parse((await lllm(home, ["logs", "--json", "-n", "50"])).stdout) as { runs: Array<{ id: string; test_file: string | null; test_case: string | null; continues_run: string | null }> };
    const replayRuns = logs.runs.filter((run) => report.cases.some((entry) => entry.run_ids.includes(run.id)));
    expect(replayRuns).toHaveLength(4);
    for (const run of replayRuns) expect(run.test_file).toBe(testFile);
    expect(replayRuns.filter((run) => run.test_case === "a conversation")).toHaveLength(2);
    expect(replayRuns.find((run) => run.test_case === "a conversation" && run.continues_run !== null)).toBeDefined();

    // A cassette is a `scripted:` model file too.
    const scripted = await lllm(home, ["run", path.join(project.weather, "tactics", "weather.yaml"), "--model", `scripted:${path.join(project.cassettes, "two-cities.yaml")}`, "--input", "What is the weather in Paris and Tokyo?", "--no-stream"]);
    expect(scripted).toMatchObject({ code: 0, stdout: "Sunny, 22 degrees celsius in Paris. Sunny, 22 degrees celsius in Tokyo.\n" });

    // Break a tool: only the case that uses it fails, with the change the model would now see.
    const tool = path.join(project.weather, "tools", "to_fahrenheit.ts");
    writeFileSync(tool, readFileSync(tool, "utf8").replace("* 9) / 5 + 32", "* 9) / 5"));
    const broken = await lllm(home, ["test", project.tests, "--junit", junit]);
    expect(broken.code, broken.stderr).toBe(1);
    expect(broken.stderr).toMatch(/✓ .*› two cities/);
    expect(broken.stderr).toMatch(/✓ .*› asks for a city/);
    expect(broken.stderr).toMatch(/✗ .*› a conversation {2}\(replay, /);
    expect(broken.stderr).toContain("the replay diverged at agent `weather_bot`'s turn 4 of 4");
    expect(broken.stderr).toContain('message 8 (the result of to_fahrenheit({"celsius":22})) differs:');
    expect(broken.stderr).toMatch(/- 71\.6\n\s+\+ 39\.6/);
    expect(broken.stderr).toContain("--update --filter 'a conversation'");
    expect(broken.stderr).toContain("Tests: 1 failed, 2 passed (3 cases)");
    const failedXml = readFileSync(junit, "utf8");
    expect(failedXml).toContain('failures="1"');
    expect(failedXml).toMatch(/<testcase classname="[^"]+" name="a conversation" time="[\d.]+">\n\s+<failure message="the replay diverged at agent `weather_bot`&apos;s turn 4 of 4/);

    // --update records again (the server is back): the new behaviour becomes the recording.
    server = await startMockOpenAIServer({ handler: model });
    const updated = await lllm(home, ["test", project.tests, "--update", "--filter", "conversation"], { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url });
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stderr).toContain("1 passed (1 case)");
    expect(updated.stderr).toContain("2 filtered out");
    expect(readFileSync(path.join(project.cassettes, "a-conversation.yaml"), "utf8")).toContain("39.6");
    expect(server.requests.length).toBeGreaterThan(0);
    expect(calls).toBeGreaterThan(0);

    // A case that fails live does not replace its cassette: a flaky answer would lose the good recording.
    const good = readFileSync(path.join(project.cassettes, "a-conversation.yaml"), "utf8");
    await server.close();
    server = await startMockOpenAIServer({ handler: () => "I cannot say." });
    const flaky = await inProcess(home, ["test", project.tests, "--update", "--filter", "conversation"], { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url });
    expect(flaky.code, flaky.stderr).toBe(1);
    expect(flaky.stderr).toContain("a-conversation.yaml was kept; fix the case (or delete the cassette) to record it again");
    expect(readFileSync(path.join(project.cassettes, "a-conversation.yaml"), "utf8")).toBe(good);
  });

  it("--offline fails a case without a cassette instead of calling a model; a plain run calls it live", async () => {
    const home = tempDir();
    const project = weatherProject();
    const offline = await inProcess(home, ["test", project.tests, "--offline", "--filter", "asks for"]);
    expect(offline.code, offline.stderr).toBe(1);
    expect(offline.stderr).toContain("no cassette");
    expect(offline.stderr).toContain("and --offline calls no model");
    expect(offline.stderr).toContain("lllm test: 1 case in 1 file (without a cassette 1)");
    expect(offline.stderr).toMatch(/✗ .*› asks for a city {2}\(no cassette, /);
    expect(offline.stderr).toContain("Record it: lllm test");
    expect(existsSync(project.cassettes)).toBe(false);

    server = await startMockOpenAIServer({ handler: model });
    const live = await inProcess(home, ["test", project.tests, "--filter", "asks for"], { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url });
    expect(live.code, live.stderr).toBe(0);
    expect(live.stderr).toMatch(/✓ .*› asks for a city {2}\(live, /);
    expect(server.requests.filter((request) => request.path === "/v1/chat/completions")).toHaveLength(1);
    // Live without --record writes nothing.
    expect(existsSync(project.cassettes)).toBe(false);
  });
});

describe("lllm test and Ctrl-C", { timeout: 120_000 }, () => {
  it("stops the running cases, starts no other, and exits 130", async () => {
    const home = tempDir();
    const project = weatherProject();
    server = await startMockOpenAIServer({ handler: model, failures: [{ delayMs: 60_000 }, { delayMs: 60_000 }] });
    const child = spawn(process.execPath, [BIN, "test", project.tests, "--concurrency", "1"], { env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: home, NO_COLOR: "1", OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(await waitUntil(() => server!.requests.length > 0, 60_000)).toBe(true);
    child.kill("SIGINT");
    expect(await closed).toBe(130);
    expect(stderr).toMatch(/✗ .*› two cities/);
    expect(stderr).toContain("interrupted");
    expect(server.requests).toHaveLength(1);
  });
});
