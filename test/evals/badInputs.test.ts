import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { EXAMPLE } from "../helpers/paths.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempTree } from "../helpers/tempTree.js";

const weather = path.join(EXAMPLE, "weather/tactics/weather.yaml");
let server: MockOpenAIServer;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  // A model that would answer: a bad input must stop everything before any call reaches it.
  server = await startMockOpenAIServer({ handler: () => "an answer" });
  env = { OPENAI_API_KEY: "k-bad-inputs", OPENAI_BASE_URL: server.url };
});
afterAll(() => server.close());

/** `lllm test` on a folder holding these files: exit 2, and not one model call. */
async function rejected(files: Record<string, string>, args: string[] = []) {
  const dir = tempTree(files);
  const result = await runCliInProcess(["test", dir, ...args], { env, cwd: dir });
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe("");
  expect(server.requests).toHaveLength(0);
  return result;
}

const header = `tactic: ${weather}\ncases:\n`;

describe("lllm test --filter that matches no case", { timeout: 120_000 }, () => {
  it("exits 1 and says so (as jest and vitest do); --json says ok: false", async () => {
    const dir = tempTree({ "a.test.yaml": `${header}  - {name: a, input: hi}\n  - {name: b, input: hi}\n` });
    const result = await runCliInProcess(["test", dir, "--filter", "nothing like it"], { env, cwd: dir });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('no case matches --filter "nothing like it" (2 cases left out); it matches text in `<file> › <case name>`, ignoring case');
    const json = await runCliInProcess(["test", dir, "--filter", "nothing like it", "--json"], { env, cwd: dir });
    expect(json.code, json.stderr).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, summary: { total: 0, filtered_out: 2, unmatched_filter: "nothing like it" } });
    expect(server.requests).toHaveLength(0);
  });
});

describe("lllm test: bad input stops everything, exit 2, with file:line:col and a did-you-mean", { timeout: 120_000 }, () => {
  it("an unknown assertion type (and an unknown key)", async () => {
    const { stderr } = await rejected({ "a.test.yaml": `${header}  - name: a\n    input: hi\n    assert:\n      - contians: Paris\n      - tool-called: {name: x, arg: {city: Paris}}\n` });
    expect(stderr).toContain("a.test.yaml:6:9: unknown key `contians` in cases[0].assert[0]\n    did you mean `contains`?");
    expect(stderr).toContain("a.test.yaml:7:32: unknown key `arg` in cases[0].assert[1][\"tool-called\"]\n    did you mean `args`?");
  });

  it("a missing tactic", async () => {
    const { stderr } = await rejected({ "a.test.yaml": `tactic: ${path.join(EXAMPLE, "weather/tactics/wether.yaml")}\ncases:\n  - {name: a, input: hi}\n` });
    expect(stderr).toMatch(/a\.test\.yaml:1:9: tactic not found: .*wether\.yaml/);
    expect(stderr).toContain("did you mean `weather.yaml`?");
  });

  it("a test file that is not YAML", async () => {
    const { stderr } = await rejected({ "a.test.yaml": "tactic: [unclosed\ncases: -\n" });
    expect(stderr).toMatch(/a\.test\.yaml:2:1: /);
  });

  it("a cassette from another tactic", async () => {
    const { stderr } = await rejected({
      "t.test.yaml": `${header}  - {name: two cities, input: hi}\n`,
      "__cassettes__/t.test.yaml/two-cities.yaml": "tactic: desk\nagents:\n  editor: [Hello]\n",
    });
    expect(stderr).toContain("__cassettes__/t.test.yaml/two-cities.yaml: this cassette was recorded for tactic `desk`, but t.test.yaml tests tactic `weather`");
    expect(stderr).toContain("Re-record it with `lllm test --update`");
  });

  it("a corrupt cassette, named with its line", async () => {
    const { stderr } = await rejected({
      "t.test.yaml": `${header}  - {name: a, input: hi}\n`,
      "__cassettes__/t.test.yaml/a.yaml": "tactic: weather\nagents:\n  weather_bot:\n    - txt: Hello\n",
    });
    expect(stderr).toContain("__cassettes__/t.test.yaml/a.yaml:4:12: the cassette is corrupt: agents.weather_bot[0].txt: unknown key `txt`");
    const broken = await rejected({ "t.test.yaml": `${header}  - {name: a, input: hi}\n`, "__cassettes__/t.test.yaml/a.yaml": "agents: [unclosed\n" });
    expect(broken.stderr).toContain("__cassettes__/t.test.yaml/a.yaml:2:1: the cassette is corrupt: cassette is not valid YAML/JSON");
  });

  it("what a schema cannot say: two types in one assertion, a shared case name, a turn past the last, a regex that does not compile, an unknown error, a missing check file", async () => {
    const { stderr } = await rejected({
      "a.test.yaml": [
        header.trimEnd(),
        "  - name: one",
        "    input: hi",
        "    expect-error: ModelBehaviourError",
        "    assert:",
        "      - {contains: a, regex: b}",
        "      - {regex: '(unclosed'}",
        "      - {javascript: ./checks/isShrt.ts}",
        "      - {contains: x, turn: 2}",
        "  - {name: one, input: again}",
        "",
      ].join("\n"),
      "checks/isShort.ts": "export default () => true;\n",
    });
    // In file order.
    expect(stderr.indexOf("a.test.yaml:5:19")).toBeLessThan(stderr.indexOf("a.test.yaml:7:9"));
    expect(stderr).toContain("a.test.yaml:7:9: an assertion has one type; this one has `contains`, `regex` (write each as its own list item)");
    expect(stderr).toContain('a.test.yaml:8:17: regex "(unclosed" does not compile');
    expect(stderr).toMatch(/a\.test\.yaml:9:22: javascript check not found: .*isShrt\.ts\n\s+did you mean `isShort\.ts`\?/);
    expect(stderr).toContain("a.test.yaml:10:29: turn 2: case `one` has 1 turn");
    expect(stderr).toContain("a.test.yaml:5:19: expect-error `ModelBehaviourError` is not an error class or code of lllm\n    did you mean `ModelBehaviorError`?");
    expect(stderr).toContain("a.test.yaml:11:12: cases[0] (`one`) and cases[1] (`one`) have the same name: they would share a cassette (`one.yaml`)");
  });

  it("every problem of a test file at once: the schema's, a missing tactic, a bad regex, a shared name, a turn past the last", async () => {
    const { stderr } = await rejected({
      "a.test.yaml": [
        `tactic: ${path.join(EXAMPLE, "weather/tactics/wether.yaml")}`,
        "cases:",
        "  - name: one",
        "    input: hi",
        "    assert:",
        "      - {regex: '(unclosed'}",
        "      - {contains: x, turn: 3}",
        "      - {contians: y}",
        "  - {name: one, inptu: again}",
        "",
      ].join("\n"),
    });
    expect(stderr).toContain("lllm: error: 7 problems:");
    expect(stderr).toMatch(/a\.test\.yaml:1:9: tactic not found: .*wether\.yaml/);
    expect(stderr).toContain('a.test.yaml:6:17: regex "(unclosed" does not compile');
    expect(stderr).toContain("a.test.yaml:7:29: turn 3: case `one` has 1 turn");
    expect(stderr).toContain("a.test.yaml:8:10: unknown key `contians` in cases[0].assert[2]");
    expect(stderr).toContain("a.test.yaml:9:12: cases[0] (`one`) and cases[1] (`one`) have the same name");
    expect(stderr).toContain("a.test.yaml:9:5: cases[1] must set `input` or `turns`");
    expect(stderr).toContain("a.test.yaml:9:17: unknown key `inptu` in cases[1]");
  });

  it("--record without the key a case needs: one error before any case runs, not a failed case each", async () => {
    const dir = tempTree({ "a.test.yaml": `${header}  - {name: a, input: hi}\n  - {name: b, input: hi, assert: [{judge: Says hi}]}\n` });
    for (const flag of ["--record", "--update"]) {
      // No key, and OpenAI's own endpoint (a server of one's own may not need a key).
      const result = await runCliInProcess(["test", dir, flag], { cwd: dir });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toBe(
        "lllm: error: a.test.yaml:3:5: model `gpt-4o-mini` needs an API key in OPENAI_API_KEY, which is not set; 2 cases `a`, `b` must be recorded\n  set it with `export OPENAI_API_KEY=…` or `lllm keys set OPENAI_API_KEY`, or name another variable with invoker_config.api_key_env\n",
      );
    }
    expect(server.requests).toHaveLength(0);
  });

  it("--junit naming a folder (or a path under a file) is a usage error before any case runs", async () => {
    const dir = tempTree({ "a.test.yaml": `${header}  - {name: a, input: hi}\n`, "reports/.keep": "" });
    const folder = await runCliInProcess(["test", dir, "--junit", path.join(dir, "reports")], { env, cwd: dir });
    expect(folder.code, folder.stderr).toBe(2);
    expect(folder.stderr).toBe(`lllm: error: --junit names a folder (${path.join(dir, "reports")}): it takes the file to write the JUnit XML to\n  Give the report's file, e.g. --junit reports/junit.xml (its folders are made when missing).\n`);
    const underFile = await runCliInProcess(["test", dir, "--junit", "reports/.keep/junit.xml"], { env, cwd: dir });
    expect(underFile.code, underFile.stderr).toBe(2);
    expect(underFile.stderr).toContain(`is a file, not a folder`);
    expect(server.requests).toHaveLength(0);
  });

  it("a conversation on a tactic that is not an agent pattern", async () => {
    const { stderr } = await rejected({
      "p.yaml": "tactic_type: pipeline\nglobal: {model_name: gpt-4o-mini}\nsteps: [{agent: a}]\nagent_configs: [{name: a, system_prompt: hi}]\n",
      "p.test.yaml": "tactic: p.yaml\ncases:\n  - name: talk\n    turns: [hi, again]\n",
    });
    expect(stderr).toContain("p.test.yaml:4:12: case `talk` has several turns, but the tactic's tactic_type is `pipeline`");
  });

  it("usage: no test files, a path that does not exist, --offline with --record, a bad --concurrency; --json prints one error object", async () => {
    expect((await rejected({ "readme.md": "hi" })).stderr).toContain("no test files (*.test.yaml, *.test.yml, *.test.json) under");
    // TypeScript's test configuration is not a test file (a search at a project's root found it, and failed on it).
    expect((await rejected({ "tsconfig.test.json": '{"extends": "./tsconfig.json"}', "jsconfig.test.json": "{}" })).stderr).toContain("no test files (*.test.yaml, *.test.yml, *.test.json) under");
    const dir = tempTree({ "a.test.yaml": `${header}  - {name: a, input: hi}\n` });
    const missing = await runCliInProcess(["test", path.join(dir, "nope")], { env });
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toContain("no such test file or folder:");
    expect((await runCliInProcess(["test", dir, "--offline", "--record"], { env })).stderr).toContain("--offline cannot --record");
    expect((await runCliInProcess(["test", dir, "--concurrency", "0"], { env })).stderr).toContain("--concurrency must be a whole number >= 1 (got `0`)");
    mkdirSync(path.join(dir, "more"));
    writeFileSync(path.join(dir, "more", "b.test.json"), JSON.stringify({ tactic: weather, cases: [{ name: "b", input: "x", assert: [{ "max-cost": -1 }] }] }));
    const json = await runCliInProcess(["test", dir, "--json"], { env });
    expect(json.code, json.stderr).toBe(2);
    const failure = JSON.parse(json.stdout) as { schema_version: number; error: { code: string; message: string } };
    expect(failure).toMatchObject({ schema_version: 1, error: { code: "test_invalid" } });
    expect(failure.error.message).toContain("cases[0].assert[0][\"max-cost\"] must be at least 0 (got -1)");
    expect(server.requests).toHaveLength(0);
  });
});
