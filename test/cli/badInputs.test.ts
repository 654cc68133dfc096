import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EXAMPLE, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempTree } from "../helpers/tempTree.js";

const AGENT = `agent_configs:\n  - name: bot\n    model_name: m\n    system_prompt: hi\n`;
const weather = path.join(EXAMPLE, "weather");

/**
 * The corpus of bad inputs: each must fail with exit code 2, a message that says what and where, and no stack
 * trace. `expected` are fragments of stderr, checked in order of appearance is not required.
 */
const cases: Array<{ name: string; files: Record<string, string>; args?: string[]; expected: Array<string | RegExp> }> = [
  {
    name: "broken YAML",
    files: { "tactic.yaml": `name: x\nglobal:\n  model_args: {temperature: 0.1\n${AGENT}` },
    expected: ["tactic.yaml:4:1", "Flow map in block collection must be sufficiently indented"],
  },
  {
    // Where the quote opens: it was the end of the file, line 6 of a five-line file.
    name: "a quote never closed",
    files: { "tactic.yaml": `name: x\nagent_configs:\n  - name: bot\n    system_prompt: "unterminated\n    model_name: m\n` },
    expected: ['tactic.yaml:4:20: the double quote that opens a value here is never closed (the value runs on to the end of the file)'],
  },
  {
    name: "a value of the wrong type",
    files: { "tactic.yaml": `${AGENT}    max_interrupt_steps: three\n` },
    expected: ["tactic.yaml:5:26", "agent_configs[0].max_interrupt_steps", "must be an integer"],
  },
  {
    name: "an unknown key, with the closest valid key",
    files: { "tactic.yaml": `${AGENT}    modle_args: {temperature: 0}\n` },
    expected: ["tactic.yaml:5:5", "unknown key `modle_args`", "did you mean `model_args`?"],
  },
  {
    name: "several problems at once",
    files: { "t2.yaml": `tactic_typ: agent\n${AGENT}    max_interrupt_steps: -1\n    tools: web\n` },
    args: ["t2.yaml"],
    expected: ["3 problems", "t2.yaml:1:1", "unknown key `tactic_typ`", "did you mean `tactic_type`?", "t2.yaml:6:26", "agent_configs[0].max_interrupt_steps must be at least 0 (got -1)", "agent_configs[0].tools must be a list"],
  },
  {
    name: "a base cycle",
    files: { "a.yaml": `base: ./b.yaml\n${AGENT}`, "b.yaml": `base: ./a.yaml\n` },
    args: ["a.yaml"],
    expected: ["a.yaml -> b.yaml -> a.yaml"],
  },
  {
    name: "a missing tactic file",
    files: {},
    args: ["nope.yaml"],
    // With what a tactic may be, and where to get one: there is no near name to suggest (it had no hint at all).
    expected: ["lllm: error: tactic file not found: nope.yaml\n  A tactic is a path, relative to the current folder, or a package's tactic by its ref", "`lllm init` makes a package with one"],
  },
  {
    name: "a missing tactic file with a near name beside it, as the test loader says",
    files: { "weather.yaml": AGENT },
    args: ["wether.yaml"],
    expected: ["lllm: error: tactic file not found: wether.yaml\n  did you mean `weather.yaml`?"],
  },
  {
    name: "a missing base file",
    files: { "tactic.yaml": `base: ./parent.yaml\n${AGENT}` },
    expected: ["parent.yaml", "tactic.yaml:1"],
  },
  {
    name: "a broken package manifest",
    files: { "pkg/lllm.toml": `[package\nname = "pkg"\n`, "tactic.yaml": `packages: [./pkg]\n${AGENT}` },
    expected: ["lllm.toml:1", "cannot parse the package manifest"],
  },
  {
    name: "a dependency cycle",
    files: {
      "a/lllm.yaml": `name: a\ndependencies:\n  packages: [../b]\n`,
      "b/lllm.yaml": `name: b\ndependencies:\n  packages: [../a]\n`,
      "tactic.yaml": `packages: [./a]\n${AGENT}`,
    },
    expected: ["dependency cycle: a -> b -> a"],
  },
  {
    name: "a tool file that throws on import",
    files: { "pkg/tools/bad.ts": `import { tool } from "lllm";\nconst x: number = 1;\nthrow new Error("boom at import " + x);\n`, "tactic.yaml": `packages: [./pkg]\n${AGENT}` },
    expected: [/pkg\/tools\/bad\.ts:3/, "tool file failed to load: boom at import 1"],
  },
  {
    name: "two tools with one name",
    files: {
      "pkg/tools/a.ts": `import { tool } from "lllm";\nexport default tool({ name: "dup", description: "a", run: () => "a" });\n`,
      "pkg/tools/b.mjs": `import { tool } from "lllm";\nexport const b = tool({ name: "dup", description: "b", run: () => "b" });\n`,
      "tactic.yaml": `packages: [./pkg]\n${AGENT}`,
    },
    expected: ["two tool implementations named `dup` in package `pkg`", "a.ts", "b.mjs"],
  },
  {
    name: "a missing tool ref, with where it was used and the closest refs",
    files: { "tactic.yaml": `packages: [${weather}]\n${AGENT}    tools:\n      - get_weather\n      - weather.tools:get_wether\n` },
    expected: ["tactic.yaml:8:9", "tool `weather.tools:get_wether` not found", "did you mean `weather.tools:get_weather`"],
  },
  {
    name: "a missing prompt ref",
    files: { "tactic.yaml": `packages: [${weather}]\nagent_configs:\n  - name: bot\n    model_name: m\n    system_prompt_path: weather.prompts:sytem\n` },
    expected: ["tactic.yaml:5:25", "prompt `weather.prompts:sytem` not found", "weather.prompts:system"],
  },
  {
    name: "a package that does not exist",
    files: { "tactic.yaml": `packages: [./nowhere]\n${AGENT}` },
    expected: ["tactic.yaml:1:12", "package folder `", "nowhere", "does not exist"],
  },
  {
    name: "a declaration with no implementation",
    files: { "pkg/tools/lookup.yaml": `name: lookup\ndescription: Look something up\nparameters:\n  q: {type: string}\n`, "tactic.yaml": `packages: [./pkg]\n${AGENT}    tools: [lookup]\n` },
    expected: ["tactic.yaml:6:13", "tool `pkg.tools:lookup` is a declaration with no implementation", "named exactly `lookup`"],
  },
  {
    name: "an ambiguous bare tool name",
    files: {
      "one/tools/t.ts": `import { tool } from "lllm";\nexport default tool({ name: "same", description: "1", run: () => 1 });\n`,
      "two/tools/t.ts": `import { tool } from "lllm";\nexport default tool({ name: "same", description: "2", run: () => 2 });\n`,
      "tactic.yaml": `packages: [./one, ./two]\n${AGENT}    tools: [same]\n`,
    },
    expected: ["tool name `same` is ambiguous", "`one.tools:same`", "`two.tools:same`"],
  },
  {
    name: "a tool parameter whose schema is not JSON Schema",
    files: { "pkg/tools/lookup.yaml": `name: lookup\ndescription: Look something up\ncommand: [python3, x.py]\nparameters:\n  q: {type: strin}\n`, "tactic.yaml": `packages: [./pkg]\n${AGENT}` },
    expected: ["lookup.yaml", "the schema of parameter `q` is not valid JSON Schema", "string, number, integer"],
  },
  {
    name: "an unknown tactic_type, with the closest pattern",
    files: { "tactic.yaml": `name: x\ntactic_type: agnet\n${AGENT}` },
    expected: ["tactic.yaml:2:14", "unknown tactic_type `agnet`", "did you mean `agent`?", "`pipeline`"],
  },
  {
    name: "a tactic_type that is no pattern at all",
    files: { "tactic.yaml": `tactic_type: reactive\n${AGENT}` },
    expected: ["tactic.yaml:1:14", "unknown tactic_type `reactive`", "`code-action`"],
  },
  {
    name: "an agent without a model",
    files: { "tactic.yaml": `agent_configs:\n  - name: bot\n    system_prompt: hi\n` },
    expected: ["tactic.yaml:2", "bot", "model_name", "--model"],
  },
];

describe("bad inputs: exit 2 with a message that says what, where and how to fix", () => {
  for (const testCase of cases) {
    it(testCase.name, async () => {
      const dir = tempTree(testCase.files);
      const result = await runCliInProcess(["validate", ...(testCase.args ?? ["tactic.yaml"])], { cwd: dir });
      expect(result.stdout).toBe("");
      for (const fragment of testCase.expected) {
        if (typeof fragment === "string") expect(result.stderr).toContain(fragment);
        else expect(result.stderr).toMatch(fragment);
      }
      expect(result.stderr).toMatch(/^lllm: error: /);
      expect(result.stderr).not.toMatch(/\n\s+at .*\(.*:\d+:\d+\)/); // no stack trace without --verbose
      expect(result.code, result.stderr).toBe(2);
    });
  }

  it("--verbose adds the stack trace", async () => {
    const dir = tempTree({ "tactic.yaml": `${AGENT}    modle_args: {}\n` });
    const result = await runCli(["validate", "tactic.yaml", "--verbose"], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/\n\s+at /);
  });

  it("tools call with --args that is not JSON", async () => {
    const result = await runCliInProcess(["tools", "call", "get_weather", "-p", weather, "--args", "{city: Paris}"]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("--args is not valid JSON");
    expect(result.stderr).toContain(`--args '{"city": "Paris"}'`);
  });

  it("a --var that no template uses, near one the tactic knows, is named with that one (it ran silently without it)", async () => {
    const dir = tempTree({ "tone.yaml": `vars: {tone: plain}\nprompt: "Say {input} in a {tone} tone"\n${AGENT}` });
    const run = (...vars: string[]) => runCliInProcess(["run", "tone.yaml", "--dry-run", "-i", "hi", ...vars.flatMap((entry) => ["--var", entry])], { cwd: dir });
    const typo = await run("tnoe=angry");
    expect(typo.code, typo.stderr).toBe(0);
    expect(typo.stderr).toContain("lllm: warning: --var tnoe: no template of the tactic uses {tnoe}, nor do its `vars:` declare it; did you mean `tone`?");
    // The run is the one it was: the tactic's own value.
    expect(typo.stdout).toContain("in a plain tone");
    // A var the tactic uses, or one that is near nothing it knows (a TypeScript tactic, a nested one may read it), says nothing.
    for (const quiet of [await run("tone=angry"), await run("audience=kids")]) {
      expect(quiet.code, quiet.stderr).toBe(0);
      expect(quiet.stderr).not.toContain("--var");
    }
  });

  it("a tool file that does not parse is named at its line and column, and no tools folder is asked for", async () => {
    const dir = tempTree({
      "pkg/tools/broken.ts": 'import { tool } from "lllm";\nexport default tool({ name: "b", description: "x", parameters: {}, run: () => "y" )};\n',
      "tactic.yaml": `packages: [./pkg]\n${AGENT}    tools: [b]\n`,
    });
    const result = await runCliInProcess(["validate", "tactic.yaml"], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    // Column 83 is the `)` (the transpiler's 0-based 82); the message without the spaces that preceded its code frame.
    expect(result.stderr).toContain(`${path.join(dir, "pkg", "tools", "broken.ts")}:2:83 (tool file failed to load: ParseError: Unexpected token, expected ",").`);
    expect(result.stderr).not.toContain("No tools are loaded");
    expect(result.stderr).not.toMatch(/ +\n/);
  });

  it("run, chat and doctor name the near tactic file too", async () => {
    const dir = tempTree({ "weather.yaml": AGENT });
    for (const command of ["run", "chat", "doctor"]) {
      const result = await runCliInProcess([command, "wether.yaml"], { cwd: dir });
      expect(result.code, command).toBe(2);
      expect(result.stderr, command).toContain("lllm: error: tactic file not found: wether.yaml\n  did you mean `weather.yaml`?");
    }
  });

  it("a package's tactic named alone is refused with its ref, and a ref works inside the package's folder without -p", async () => {
    const alone = await runCliInProcess(["validate", "briefing", "-p", weather]);
    expect(alone.code, alone.stderr).toBe(2);
    expect(alone.stderr).toBe("lllm: error: tactic file not found: briefing\n  a package's tactic is named with its package: `weather.tactics:briefing`\n");
    const near = await runCliInProcess(["run", "wether", "-p", weather, "-i", "x"]);
    expect(near.code, near.stderr).toBe(2);
    expect(near.stderr).toContain("tactic file not found: wether\n  did you mean `weather.tactics:weather`?");
    // Inside the package, as `lllm tools list` there: its tactics by ref, and the hint too.
    const inside = await runCliInProcess(["validate", "weather.tactics:briefing"], { cwd: weather });
    expect(inside.code, inside.stderr).toBe(0);
    expect(inside.stdout).toContain("ok tactic briefing");
    const hinted = await runCliInProcess(["validate", "briefing"], { cwd: weather });
    expect(hinted.stderr).toContain("`weather.tactics:briefing`");
    // A file named like the ref in the working folder (planted in a shared one) does not stand in for the tactic.
    const planted = tempTree({ "weather.tactics:briefing": AGENT });
    const byRef = await runCliInProcess(["validate", "weather.tactics:briefing", "-p", weather], { cwd: planted });
    expect(byRef.code, byRef.stderr).toBe(0);
    expect(byRef.stdout).toContain(`ok tactic briefing (${path.join(weather, "tactics", "briefing.ts")})`);
    const noPackage = await runCliInProcess(["validate", "weather.tactics:briefing"], { cwd: planted });
    expect(noPackage.code, noPackage.stderr).toBe(2);
    expect(noPackage.stderr).toContain("no package named `weather`");
    expect(noPackage.stderr).toContain("A file of that name is in this folder: to run it, name it as a path (./weather.tactics:briefing).");
    expect((await runCliInProcess(["validate", "./weather.tactics:briefing"], { cwd: planted })).code).toBe(0);
    // A folder with a mere tools/ (a repository) is not taken for a package to look a ref up: its files do not run.
    const repo = tempTree({ "tools/deploy.mjs": `import { writeFileSync } from "node:fs";\nwriteFileSync("ran", "x");\nexport default [];\n` });
    mkdirSync(path.join(repo, "lllm_packages"));
    symlinkSync(weather, path.join(repo, "lllm_packages", "weather"));
    const found = await runCliInProcess(["validate", "weather.tactics:briefing"], { cwd: repo });
    expect(found.code, found.stderr).toBe(0);
    expect(existsSync(path.join(repo, "ran"))).toBe(false);
    // A name no package has is the plain not-found error.
    expect((await runCliInProcess(["validate", "zzzz", "-p", weather])).stderr).toBe("lllm: error: tactic file not found: zzzz\n  A tactic is a path, relative to the current folder, or a package's tactic by its ref (weather.tactics:weather); `lllm init` makes a package with one.\n");
  });

  // The cases above run in-process (runCliInProcess); these spawn the built binary, end to end.
  it("an unknown command is a usage error", async () => {
    const result = await runCli(["valdate", "x.yaml"]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("unknown command 'valdate'");
    expect(result.stderr).toContain("validate");
  });
});
