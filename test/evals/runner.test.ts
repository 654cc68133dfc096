import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runTests, type CaseResult, type Reporter } from "../../src/index.js";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import type { MockRequestBody } from "../../src/testing/RecordedRequest.js";
import type { ScriptedTurn } from "../../src/providers/ScriptedTurn.js";
import { leaksOf } from "../helpers/secretEncodings.js";
import { tempTree } from "../helpers/tempTree.js";

let server: MockOpenAIServer | undefined;
beforeEach(() => {
  vi.stubEnv("LLLM_LOG", "0");
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
  server = undefined;
});

/** A project: a package with the tools `gather` and `echo`, a tactic over them, and test files. */
function project(tests: Record<string, string>, tactic = "name: crew\npackages: [./pkg]\nglobal:\n  model_name: gpt-4o-mini\n  tools: [gather, echo, whoami]\nagent_configs:\n  - name: bot\n    system_prompt: You help.\n"): string {
  return tempTree({
    "pkg/lllm.yaml": "name: pkg\n",
    // Waits until a second case is in it too: an answer that says "at most 2 at once" shows two ran together, never three.
    "pkg/tools/gather.ts": [
      'import { tool } from "lllm";',
      "let arrived = 0; let active = 0; let most = 0; const waiting: Array<() => void> = [];",
      'export default tool({ name: "gather", description: "Meet a peer", parameters: {}, run: async () => {',
      "  active += 1; most = Math.max(most, active); arrived += 1;",
      "  if (arrived % 2 === 0) for (const release of waiting.splice(0)) release(); else await new Promise<void>((resolve) => waiting.push(resolve));",
      "  active -= 1;",
      "  return `met; at most ${most} at once`;",
      "} });",
    ].join("\n"),
    "pkg/tools/echo.ts": 'import { tool } from "lllm";\nexport default tool({ name: "echo", description: "Echo a word", parameters: { word: { type: "string" } }, run: ({ word }) => `echo:${word}` });\n',
    // A careless tool that shows a credential of the environment, in several encodings.
    "pkg/tools/whoami.ts": 'import { tool } from "lllm";\nexport default tool({ name: "whoami", description: "Who am I", parameters: {}, run: () => { const token = process.env.SERVICE_TOKEN ?? ""; return `token ${token} / ${encodeURIComponent(token)} / ${Buffer.from(token).toString("base64")}`; } });\n',
    "tactic.yaml": tactic,
    ...tests,
  });
}

/** The model: a message naming a tool is answered by calling it (with `word`), then by the tool's result. */
function model(body: MockRequestBody): ScriptedTurn {
  const messages = body.messages ?? [];
  const last = messages.at(-1)!;
  if (last["role"] === "tool") return String(last["content"]).split("\n---\n")[1]?.replace(/\n---$/, "") ?? "?";
  const text = String(last["content"]);
  const tool = /\b(gather|echo|nothing|who)\b/.exec(text)?.[1];
  if (tool === "who") return { tool_calls: [{ name: "whoami", arguments: {} }] };
  if (tool === "gather") return { tool_calls: [{ name: "gather", arguments: {} }] };
  if (tool === "echo") return { tool_calls: [{ name: "echo", arguments: { word: /word (\w+)/.exec(text)?.[1] ?? "none" } }] };
  if (tool === "nothing") return { tool_calls: [{ name: "no_such_tool", arguments: {} }] };
  return `you said: ${text}`;
}

async function live(handler: (body: MockRequestBody) => ScriptedTurn = model): Promise<NodeJS.ProcessEnv> {
  server = await startMockOpenAIServer({ handler });
  return { ...process.env, OPENAI_API_KEY: "k-test-runner", OPENAI_BASE_URL: server.url };
}

/** A reporter that keeps what it is told. */
function recorder(): Reporter & { results: CaseResult[]; started: number } {
  const kept = { results: [] as CaseResult[], started: 0 };
  return Object.assign(kept, { onRunStart: () => void (kept.started += 1), onCaseResult: (result: CaseResult) => void kept.results.push(result) });
}

describe("runTests", { timeout: 240_000 }, () => {
  it("runs cases in parallel up to the concurrency, and no more", async () => {
    const cases = ["one", "two", "three", "four"].map((name) => `  - name: ${name}\n    input: please gather\n    assert:\n      - contains: at most 2 at once\n`).join("");
    const dir = project({ "crew.test.yaml": `tactic: tactic.yaml\ncases:\n${cases}` });
    const run = await runTests({ paths: [dir], concurrency: 2, env: await live() });
    expect(run.results.map((result) => [result.name, result.status, result.mode])).toEqual([
      ["one", "passed", "live"],
      ["two", "passed", "live"],
      ["three", "passed", "live"],
      ["four", "passed", "live"],
    ]);
    expect(run).toMatchObject({ ok: true, passed: 4, failed: 0 });
  });

  it("--bail starts no case after a failure; --filter runs only the matching cases", async () => {
    const dir = project({
      "crew.test.yaml": "tactic: tactic.yaml\ncases:\n  - name: first\n    input: echo word a\n    assert: [{contains: 'echo:a'}]\n  - name: second fails\n    input: echo word b\n    assert: [{contains: 'echo:zzz'}]\n  - name: third\n    input: echo word c\n",
    });
    const env = await live();
    const reporter = recorder();
    const bailed = await runTests({ paths: [dir], concurrency: 1, bail: true, env, reporters: [reporter] });
    expect(bailed).toMatchObject({ ok: false, passed: 1, failed: 1, skipped: 1, bailed: true });
    expect(bailed.results[2]).toMatchObject({ name: "third", status: "skipped", skipReason: "not run: --bail after a failure" });
    expect(reporter.results.map((result) => result.name)).toEqual(["first", "second fails", "third"]);
    const filtered = await runTests({ paths: [dir], filter: "THIRD", env });
    expect(filtered.results.map((result) => result.name)).toEqual(["third"]);
    expect(filtered).toMatchObject({ ok: true, filteredOut: 2 });
  });

  it("repeat runs a live case several times; it passes when at least the threshold of them pass", async () => {
    let calls = 0;
    // Every other answer is right.
    const flaky = (): ScriptedTurn => (++calls % 2 === 1 ? "yes" : "no");
    const dir = project({
      "flaky.test.yaml": "tactic: tactic.yaml\ncases:\n  - name: half is enough\n    input: hi\n    repeat: 4\n    threshold: 0.5\n    assert: [{contains: 'yes'}]\n  - name: half is not enough\n    input: hi\n    repeat: 4\n    threshold: 0.8\n    assert: [{contains: 'yes'}]\n",
    });
    const run = await runTests({ paths: [dir], concurrency: 1, env: await live(flaky) });
    expect(run.results[0]).toMatchObject({ status: "passed", repeat: { runs: 4, passed: 2, threshold: 0.5 } });
    expect(run.results[1]).toMatchObject({ status: "failed", repeat: { runs: 4, passed: 2, threshold: 0.8 } });
    expect(run.results[0]!.runIds).toHaveLength(0); // LLLM_LOG=0: nothing recorded
    expect(calls).toBe(8);
  });

  it("expect-error and expect-exit pass when the run fails so, and fail with what happened otherwise", async () => {
    const dir = project({
      "errors.test.yaml": [
        "tactic: tactic.yaml",
        "cases:",
        "  - {name: unknown tool is a model error, input: do nothing, expect-error: ModelBehaviorError}",
        "  - {name: by class, input: do nothing, expect-error: UnknownToolError, expect-exit: 1}",
        "  - {name: by code, input: do nothing, expect-error: unknown_tool}",
        "  - {name: wrong class, input: do nothing, expect-error: BudgetError}",
        "  - {name: expected a failure, input: hi, expect-error: ModelBehaviorError}",
        "  - {name: wrong exit, input: do nothing, expect-exit: 3}",
        "  - {name: unexpected failure, input: do nothing}",
        "",
      ].join("\n"),
    });
    const run = await runTests({ paths: [dir], env: await live() });
    const byName = Object.fromEntries(run.results.map((result) => [result.name, result]));
    expect(byName["unknown tool is a model error"]).toMatchObject({ status: "passed", error: { code: "unknown_tool", exitCode: 1 } });
    expect(byName["by class"]).toMatchObject({ status: "passed" });
    expect(byName["by code"]).toMatchObject({ status: "passed" });
    expect(byName["wrong class"]!.problem?.message).toMatch(/^expected the run to fail with BudgetError, but it failed with UnknownToolError \(unknown_tool\): agent `bot` called the tool `no_such_tool`/);
    expect(byName["expected a failure"]!.problem).toEqual({ kind: "expectation", message: 'expected the run to fail with ModelBehaviorError, but it answered: "you said: hi"' });
    expect(byName["wrong exit"]!.problem?.message).toMatch(/^expected exit code 3, got 1 \(unknown_tool: /);
    expect(byName["unexpected failure"]!.problem).toMatchObject({ kind: "error" });
    expect(byName["unexpected failure"]!.problem?.message).toMatch(/^the run failed: UnknownToolError \(unknown_tool\): /);
  });

  it("a cassette never holds a secret, and the replay of a redacted text still matches", async () => {
    const token = "svc-Hq83/kfP+zL0w9Xe==";
    const dir = project({ "who.test.yaml": "tactic: tactic.yaml\ncases:\n  - name: who\n    input: who am i\n    assert: [{contains: token}]\n" });
    vi.stubEnv("SERVICE_TOKEN", token);
    const env = await live();
    const recorded = await runTests({ paths: [dir], record: true, env });
    expect(recorded.results[0]).toMatchObject({ status: "passed", mode: "record" });
    const folder = path.join(dir, "__cassettes__", "who.test.yaml");
    const cassette = readFileSync(path.join(folder, readdirSync(folder)[0]!), "utf8");
    expect(cassette).toContain("[redacted]");
    expect(leaksOf(cassette, token)).toEqual([]);
    await server!.close();
    server = undefined;
    const replayed = await runTests({ paths: [dir], offline: true });
    expect(replayed.results[0]).toMatchObject({ status: "passed", mode: "replay" });
  });

  it("weight: a case's score is its assertions' weighted share; it passes only when all pass", async () => {
    const dir = project({ "w.test.yaml": "tactic: tactic.yaml\ncases:\n  - name: weighed\n    input: echo word w\n    assert:\n      - {contains: 'echo:w', weight: 3}\n      - {contains: 'absent'}\n  - name: whole\n    input: echo word w\n    assert: [{contains: 'echo:w', weight: 2}, {not-contains: absent}]\n" });
    const run = await runTests({ paths: [dir], env: await live() });
    expect(run.results.map((result) => [result.name, result.status, result.score])).toEqual([["weighed", "failed", 0.75], ["whole", "passed", 1]]);
  });

  it("a tactic named by a package ref (pkg.tactics:name) records and replays like a path", async () => {
    const dir = project({
      "pkg/tactics/crew.yaml": "name: crew\nglobal:\n  model_name: gpt-4o-mini\n  tools: [echo]\nagent_configs:\n  - name: bot\n    system_prompt: You help.\n",
      "tests/ref.test.yaml": "tactic: pkg.tactics:crew\npackages: [../pkg]\ncases:\n  - name: by ref\n    input: echo word ref\n    assert: [{contains: 'echo:ref'}, {tool-called: {name: echo, args: {word: ref}}}]\n",
    });
    const recorded = await runTests({ paths: [path.join(dir, "tests")], record: true, env: await live() });
    expect(recorded.results[0]).toMatchObject({ status: "passed", mode: "record" });
    expect(readFileSync(path.join(dir, "tests/__cassettes__/ref.test.yaml/by-ref.yaml"), "utf8")).toContain("tactic: crew\n");
    const replayed = await runTests({ paths: [path.join(dir, "tests")], offline: true });
    expect(replayed.results[0]).toMatchObject({ status: "passed", mode: "replay" });
  });

  it("a judge added after the recording fails its case, saying to record it again", async () => {
    const dir = project({ "j.test.yaml": "tactic: tactic.yaml\ncases:\n  - name: judged\n    input: echo word x\n    assert: [{contains: 'echo:x'}]\n" });
    expect((await runTests({ paths: [dir], record: true, env: await live() })).ok).toBe(true);
    writeFileSync(path.join(dir, "j.test.yaml"), "tactic: tactic.yaml\ncases:\n  - name: judged\n    input: echo word x\n    assert: [{contains: 'echo:x'}, {judge: Says x}]\n");
    const run = await runTests({ paths: [dir], offline: true });
    expect(run.results[0]).toMatchObject({ status: "failed", mode: "replay" });
    const judge = run.results[0]!.assertions.find((outcome) => outcome.spec.type === "judge")!;
    expect(judge).toMatchObject({ pass: false, broken: true });
    expect(judge.reason).toContain("the script has no turns for agent `(judge)`");
    expect(judge.reason).toContain("--update --filter judged");
  });

  it("a conversation: each turn continues the dialog, and `turn: N` asserts on an earlier turn", async () => {
    const dir = project({
      "talk.test.yaml": "tactic: tactic.yaml\ncases:\n  - name: talk\n    turns: [echo word first, echo word second]\n    assert:\n      - {tool-called: {name: echo, args: {word: first}}, turn: 1}\n      - {not-tool-called: {name: echo, args: {word: first}}}\n      - contains: echo:second\n",
    });
    const requests: MockRequestBody[] = [];
    const run = await runTests({ paths: [dir], env: await live((body) => (requests.push(body), model(body))) });
    expect(run.results[0]).toMatchObject({ status: "passed" });
    // The second turn's first request carries the first turn's whole dialog.
    expect(requests[2]!.messages!.map((message) => message["role"])).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);
  });
});
