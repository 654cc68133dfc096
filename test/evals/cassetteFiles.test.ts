import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import type { MockRequestBody } from "../../src/testing/RecordedRequest.js";
import type { ScriptedTurn } from "../../src/providers/ScriptedTurn.js";
import { EXAMPLE } from "../helpers/paths.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir, tempTree } from "../helpers/tempTree.js";

// The example's stand-in model: it answers the weather tactic from what it is sent.
const { answer } = (await import(path.join(EXAMPLE, "weather/tests/mock-model.mjs"))) as { answer: (body: MockRequestBody) => ScriptedTurn };
const weather = path.join(EXAMPLE, "weather/tactics/weather.yaml");

let server: MockOpenAIServer;
let live: NodeJS.ProcessEnv;
beforeAll(async () => {
  server = await startMockOpenAIServer({ handler: answer });
  live = { OPENAI_API_KEY: "k-cassette-files", OPENAI_BASE_URL: server.url };
});
afterAll(() => server.close());
beforeEach(() => void server.requests.splice(0));

function test(dir: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return runCliInProcess(["test", dir, ...args], { env, cwd: dir });
}

/** A hand-written cassette of the weather tactic: one answer. */
const CASSETTE = "tactic: weather\nagents:\n  weather_bot:\n    - text: Sunny in Paris.\n";

describe("cassette files: one folder per test file, one file per case", { timeout: 240_000 }, () => {
  it("x.test.yaml and x.test.json beside it record into folders of their own, and each replays its own", async () => {
    const dir = tempTree({
      "x.test.yaml": `tactic: ${weather}\ncases:\n  - {name: a, input: What is the weather in Paris?, assert: [{contains: Paris}]}\n`,
      "x.test.json": JSON.stringify({ tactic: weather, cases: [{ name: "a", input: "What is the weather in Tokyo?", assert: [{ contains: "Tokyo" }] }] }),
    });
    const recorded = await test(dir, ["--record"], live);
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(readdirSync(path.join(dir, "__cassettes__")).sort()).toEqual(["x.test.json", "x.test.yaml"]);
    expect(readFileSync(path.join(dir, "__cassettes__/x.test.json/a.yaml"), "utf8")).toContain("Tokyo");
    expect(readFileSync(path.join(dir, "__cassettes__/x.test.yaml/a.yaml"), "utf8")).toContain("Paris");
    const replayed = await test(dir, ["--offline"]);
    expect(replayed.stderr).toContain("Tests: 2 passed (2 cases)");
    expect(replayed.code, replayed.stderr).toBe(0);
  });

  it("test files or case names that differ only by case, which share a file on macOS and Windows, are refused before anything runs", async () => {
    const files = await test(tempTree({ "Crew.test.yaml": `tactic: ${weather}\ncases: [{name: a, input: hi}]\n`, "crew.test.yaml": `tactic: ${weather}\ncases: [{name: b, input: hi}]\n` }), ["--record"], live);
    expect(files.code, files.stderr).toBe(2);
    expect(files.stderr).toContain("lllm: error: crew.test.yaml: crew.test.yaml and Crew.test.yaml differ only by case: their cassettes would share one folder (__cassettes__/crew.test.yaml) on macOS and Windows");
    const cases = await test(tempTree({ "c.test.yaml": `tactic: ${weather}\ncases:\n  - {name: Two Cities, input: hi}\n  - {name: two cities, input: hi}\n` }), ["--record"], live);
    expect(cases.code, cases.stderr).toBe(2);
    expect(cases.stderr).toContain("c.test.yaml:4:12: cases[0] (`Two Cities`) and cases[1] (`two cities`) have names that differ only by case, which make one file on macOS and Windows: they would share a cassette (`two-cities.yaml`)");
    expect(server.requests).toHaveLength(0);
  });

  it("a folder of the old name (__cassettes__/t.test/) is read, with the command that renames it; not when two test files shared it", async () => {
    const dir = tempTree({ "t.test.yaml": `tactic: ${weather}\ncases: [{name: a, input: hi, assert: [{contains: Sunny}]}]\n`, "__cassettes__/t.test/a.yaml": CASSETTE });
    const replayed = await test(dir, ["--offline"]);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stderr).toContain("lllm: warning: cassettes read from __cassettes__/t.test, the folder's old name; rename it so that `--record` and `--update` write beside them: mv __cassettes__/t.test __cassettes__/t.test.yaml");
    expect(replayed.stderr).toContain("✓ t.test.yaml › a  (replay");
    // t.test.json beside it wrote into the same old folder: whose cassettes these are cannot be told.
    writeFileSync(path.join(dir, "t.test.json"), JSON.stringify({ tactic: weather, cases: [{ name: "a", input: "hi" }] }));
    const shared = await test(dir, ["--offline"]);
    expect(shared.code, shared.stderr).toBe(1);
    expect(shared.stderr).toContain("✗ t.test.yaml › a  (no cassette");
    expect(shared.stderr).not.toContain("warning: cassettes read from");
  });
});

describe("lllm test on an untrusted repository", { timeout: 240_000 }, () => {
  it("a 300-character case name records (its file name cut, with a digest) and the JUnit report is written", async () => {
    const name = `Paris ${"and again ".repeat(30)}`.trim();
    expect(name.length).toBeGreaterThan(300);
    const dir = tempTree({ "t.test.yaml": `tactic: ${weather}\ncases:\n  - {name: ${name}, input: What is the weather in Paris?, assert: [{contains: Paris}]}\n  - {name: ${name} 2, input: What is the weather in Rome?}\n` });
    const junit = path.join(tempDir(), "junit.xml");
    const recorded = await test(dir, ["--record", "--junit", junit], live);
    expect(recorded.code, recorded.stderr).toBe(0);
    const files = readdirSync(path.join(dir, "__cassettes__/t.test.yaml"));
    expect(files).toHaveLength(2);
    for (const file of files) expect(file).toMatch(/^Paris-and-again-[a-z-]+-[0-9a-f]{8}\.yaml$/);
    expect(readFileSync(junit, "utf8")).toContain('tests="2" failures="0"');
    expect((await test(dir, ["--offline"])).code).toBe(0);
  });

  it("--record does not follow a symbolic link under __cassettes__; a replay does not read through one", async () => {
    const outside = tempDir("lllm-outside-");
    const dir = tempTree({ "t.test.yaml": `tactic: ${weather}\ncases: [{name: a, input: What is the weather in Paris?}]\n` });
    mkdirSync(path.join(dir, "__cassettes__"));
    symlinkSync(outside, path.join(dir, "__cassettes__/t.test.yaml"), "dir");
    const recorded = await test(dir, ["--record"], live);
    expect(recorded.code, recorded.stderr).toBe(2);
    expect(recorded.stderr).toContain("lllm: error: __cassettes__/t.test.yaml: __cassettes__/t.test.yaml is a symbolic link; lllm test does not follow links under __cassettes__");
    expect(readdirSync(outside)).toEqual([]);
    expect(server.requests).toHaveLength(0);

    const linked = tempTree({ "t.test.yaml": `tactic: ${weather}\ncases: [{name: a, input: hi}]\n`, "elsewhere.yaml": CASSETTE });
    mkdirSync(path.join(linked, "__cassettes__/t.test.yaml"), { recursive: true });
    symlinkSync(path.join(linked, "elsewhere.yaml"), path.join(linked, "__cassettes__/t.test.yaml/a.yaml"));
    const replayed = await test(linked, ["--offline"]);
    expect(replayed.code, replayed.stderr).toBe(2);
    expect(replayed.stderr).toContain("__cassettes__/t.test.yaml/a.yaml is a symbolic link");
  });

  it("a cassette past the limits (4 MB, 2,000 turns) is refused before anything runs", async () => {
    const big = `${CASSETTE}${"    - text: Sunny.\n".repeat(1)}# ${"x".repeat(4 * 1024 * 1024)}\n`;
    const dir = tempTree({ "t.test.yaml": `tactic: ${weather}\ncases: [{name: a, input: hi}]\n`, "__cassettes__/t.test.yaml/a.yaml": big });
    const large = await test(dir, ["--offline"]);
    expect(large.code, large.stderr).toBe(2);
    expect(large.stderr).toContain("lllm: error: __cassettes__/t.test.yaml/a.yaml: the cassette __cassettes__/t.test.yaml/a.yaml is too large to replay: it is 4.1 MB; a cassette may be at most 4 MB");
    writeFileSync(path.join(dir, "__cassettes__/t.test.yaml/a.yaml"), `${CASSETTE}${"    - text: Sunny.\n".repeat(2000)}`);
    const long = await test(dir, ["--offline"]);
    expect(long.code, long.stderr).toBe(2);
    expect(long.stderr).toContain("is too large to replay: it has 2001 model turns; a cassette may hold at most 2000");
    expect(existsSync(path.join(dir, "__cassettes__/t.test.yaml/a.yaml"))).toBe(true);
  });
});
