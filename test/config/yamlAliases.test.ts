import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, type CliResult } from "../helpers/runCli.js";
import { tempDir, tempTree } from "../helpers/tempTree.js";

// Issue 19 item 9: `a: &a {b: *a}` makes data that contains itself. The parse cache walked it for ever (100% CPU,
// deaf to SIGTERM); everything else that walks config data would too. Every command that reads YAML must instead
// say where the alias is (exit 2), and a few lines of aliases of aliases ("billion laughs") must not expand to
// millions of values. Real spawns with a usable cache folder (as a user has), each with a kill-timer: a hang shows
// as a null exit code, not as a stuck test run.
const CLI = { timeoutMs: 30_000 };
/** Longer than every kill-timer of a test: a CLI that hangs is killed by its test, never left spinning. */
const TEST_TIMEOUT = 150_000;
const CYCLE = "is inside the value its anchor names, which would then contain itself";

const TACTIC = 'name: t\nprompt: "{input}"\nglobal:\n  model_name: gpt-4o-mini\nagent_configs:\n  - name: bot\n    system_prompt: Hi.\n';

/** A package with a good manifest and a good tool declaration, with `files` written over them. */
function packageWith(files: Record<string, string>): string {
  return tempTree({
    "lllm.yaml": "name: pkg\nversion: 0.1.0\n",
    "tools/echo.yaml": "name: echo\ndescription: Echo a text.\nparameters:\n  text: {type: string}\n",
    ...files,
  });
}

/** The same home for the two runs of a case: the second one reads what the first left in the cache. */
async function twice(args: string[], options: { cwd?: string } = {}): Promise<CliResult[]> {
  const env = { LLLM_HOME: tempDir("lllm-home-") };
  return [await runCli(args, { ...CLI, ...options, env }), await runCli(args, { ...CLI, ...options, env })];
}

describe("a self-referencing YAML alias (issue 19 item 9)", () => {
  it.each([
    ["under a key lllm does not know", "name: t\na: &a\n  b: *a\n", "t.yaml:3:6"],
    ["in vars", "name: t\nvars: &a {x: *a}\n", "t.yaml:2:14"],
    ["in a list", 'name: t\nprompt: "{input}"\nagent_configs: &list\n  - name: bot\n    system_prompt: Hi.\n    tools: *list\n', "t.yaml:6:12"],
    ["as a merge key", "name: t\nglobal: &g\n  <<: *g\n", "t.yaml:3:7"],
  ])("in a tactic (%s): `validate` exits 2 at the alias, each time", async (_name, text, where) => {
    const dir = tempTree({ "t.yaml": text });
    for (const result of await twice(["validate", "t.yaml"], { cwd: dir })) {
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`${where}: the alias \`*`);
      expect(result.stderr).toContain(CYCLE);
      expect(result.stdout).toBe("");
    }
  }, TEST_TIMEOUT);

  it("in a tactic: `run` exits 2 at the alias, before any model call", async () => {
    const dir = tempTree({ "t.yaml": `${TACTIC}vars: &v {x: *v}\n` });
    const result = await runCli(["run", "t.yaml", "--input", "hi", "--model", "scripted:none.yaml"], { ...CLI, cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`t.yaml:8:14: the alias \`*v\` ${CYCLE}`);
  }, TEST_TIMEOUT);

  it("in a tool declaration: `validate` exits 2 naming the file and line; `tools list` lists the others", async () => {
    const pkg = packageWith({ "tools/loop.yaml": "name: loop\ndescription: &d\n  again: *d\n" });
    const tactic = path.join(tempTree({ "t.yaml": `${TACTIC}packages: [${JSON.stringify(pkg)}]\n` }), "t.yaml");
    const validated = await runCli(["validate", tactic], CLI);
    expect(validated.code, validated.stderr).toBe(2);
    expect(validated.stderr).toContain(`loop.yaml: cannot parse tool declaration: the alias \`*d\` ${CYCLE}: an alias may repeat only a value that does not hold it at line 3, column 10`);
    // As for any broken declaration: the file's tools are left out with a warning, the package's others listed.
    const listed = await runCli(["tools", "list", "-p", pkg], CLI);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toContain(`loop.yaml: cannot parse tool declaration: the alias \`*d\` ${CYCLE}`);
    expect(listed.stdout).toContain("pkg.tools:echo");
  }, TEST_TIMEOUT);

  it("in a manifest: `tools list` and `mcp serve` exit 2 at the alias", async () => {
    const pkg = packageWith({ "lllm.yaml": "name: pkg\nversion: 0.1.0\nextra: &m\n  - *m\n" });
    for (const args of [["tools", "list", "-p", pkg], ["mcp", "serve", pkg]]) {
      const result = await runCli(args, CLI);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`lllm.yaml:4:5: cannot parse the package manifest: the alias \`*m\` ${CYCLE}`);
    }
  }, TEST_TIMEOUT);

  it("in a proxy file and in the project settings: exit 2 at the alias", async () => {
    const pkg = packageWith({ "proxies/api.yaml": "name: api\nbase_url: http://127.0.0.1:9\nendpoints: &e\n  - *e\n" });
    const proxy = await runCli(["proxy", "list", "-p", pkg], CLI);
    expect(proxy.code, proxy.stderr).toBe(2);
    expect(proxy.stderr).toContain(`api.yaml:4:5: the alias \`*e\` ${CYCLE}`);
    const dir = tempTree({ "t.yaml": TACTIC, "lllm.config.yaml": "packages: &d\n  - *d\n" });
    const settings = await runCli(["validate", "t.yaml"], { ...CLI, cwd: dir });
    expect(settings.code, settings.stderr).toBe(2);
    expect(settings.stderr).toContain(`lllm.config.yaml:2:5: the alias \`*d\` ${CYCLE}`);
  }, TEST_TIMEOUT);

  it("in a scripted model file: `run --model scripted:` exits 2 at the alias", async () => {
    const dir = tempTree({ "t.yaml": TACTIC, "turns.yaml": "- &turn\n  content: hi\n  again: *turn\n" });
    const result = await runCli(["run", "t.yaml", "--input", "hi", "--model", "scripted:turns.yaml"], { ...CLI, cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`turns.yaml:3:10: model script: the alias \`*turn\` ${CYCLE}`);
  }, TEST_TIMEOUT);

  it("an alias with no anchor is a clear error too", async () => {
    const pkg = packageWith({ "lllm.yaml": "name: pkg\nversion: 0.1.0\nextra: *nothing\n" });
    const result = await runCli(["tools", "list", "-p", pkg], CLI);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("lllm.yaml:3:8: cannot parse the package manifest: the alias `*nothing` has no anchor");
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
  }, TEST_TIMEOUT);
});

describe("aliases of aliases (billion laughs)", () => {
  it("a few lines that would expand to millions of values: exit 2 at the alias that passes the limit", async () => {
    const lines = ['name: t\nprompt: "{input}"\nvars:', '  l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'];
    for (let level = 1; level < 9; level++) lines.push(`  l${level}: &l${level} [${Array.from({ length: 9 }, () => `*l${level - 1}`).join(", ")}]`);
    const dir = tempTree({ "t.yaml": `${lines.join("\n")}\n` });
    for (const result of await twice(["validate", "t.yaml"], { cwd: dir })) {
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/t\.yaml:9:\d+: the aliases repeat more than 100000 values; a config file may repeat at most 100000 through aliases/);
    }
  }, TEST_TIMEOUT);

  it("one large value repeated many times is refused as well", async () => {
    const big = `[${Array.from({ length: 5000 }, (_, index) => index).join(", ")}]`;
    const repeats = Array.from({ length: 30 }, () => "*big").join(", ");
    const dir = tempTree({ "t.yaml": `name: t\nvars:\n  big: &big ${big}\n  many: [${repeats}]\n` });
    const result = await runCli(["validate", "t.yaml"], { ...CLI, cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/t\.yaml:4:\d+: the aliases repeat more than 100000 values/);
  }, TEST_TIMEOUT);

  it("a file that repeats a few values through aliases still loads", async () => {
    const dir = tempTree({ "t.yaml": `name: t\nprompt: "{input}"\nglobal: &g\n  model_name: gpt-4o-mini\nagent_configs:\n  - name: a\n    system_prompt: Hi.\n    <<: *g\n  - name: b\n    system_prompt: Hi.\n    <<: *g\n` });
    for (const result of await twice(["validate", "t.yaml"], { cwd: dir })) {
      expect(result.stderr).toBe("");
      expect(result.code, result.stderr).toBe(0);
    }
  }, TEST_TIMEOUT);
});
