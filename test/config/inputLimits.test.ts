import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";

// Some cases spawn the CLI on large files: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

// Small hostile or broken config files must fail like any other bad file (exit 2, file and line, what limit),
// never abort node, take quadratic time, or flood the terminal; keys from the file never reach it raw.
const dir = tempDir("lllm-limits-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

// Run in the folder of the files, so that messages name them as written here. Deep nesting spawns the real CLI (it
// must not abort node, whose stack differs in a test worker); the other cases run main() in-process.
const CLI = { timeoutMs: 90_000, cwd: dir };

describe("config input limits (issue 9 item 9)", () => {
  it.each([
    ["deep.json", `{"name": "x", "global": ${"[".repeat(1000)}${"]".repeat(1000)}}`, "deep.json:1:"],
    ["deep.yaml", `name: x\nglobal: ${"[".repeat(1000)}${"]".repeat(1000)}\n`, "deep.yaml:2:"],
    ["deep-map.yaml", `name: x\nglobal: ${"{a: ".repeat(1000)}1${"}".repeat(1000)}\n`, "deep-map.yaml:2:"],
  ])("a 2 KB file nesting 1,000 flow levels (%s) is a clear error, not a crash", async (name, text, where) => {
    const result = await runCli(["validate", write(name, text)], CLI);
    expect(result.stderr).not.toMatch(/FATAL|out of memory|Maximum call stack|internal error|\n\s+at /);
    expect(result.stderr).toContain(where);
    expect(result.stderr).toContain("values nest more than 100 levels deep; a config file may nest at most 100");
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe("");
  });

  it("deep block nesting is refused the same way", async () => {
    const lines = ["name: x"];
    for (let level = 0; level < 1000; level++) lines.push(`${" ".repeat(level)}k${level}:`);
    lines.push(`${" ".repeat(1000)}v`);
    const result = await runCli(["validate", write("deep-block.yaml", `${lines.join("\n")}\n`)], CLI);
    expect(result.stderr).toContain("deep-block.yaml:102:101: values nest more than 100 levels deep");
    expect(result.code, result.stderr).toBe(2);
  });

  it("a file over the size limit is refused before it is parsed", async () => {
    const file = write("big.yaml", `name: x\ndescription: "${"a".repeat(1024 * 1024)}"\n`);
    const result = await runCliInProcess(["validate", file], { cwd: dir });
    expect(result.stderr).toMatch(/tactic file big\.yaml is 1\.0 MB; a config file may be at most 1 MB/);
    expect(result.code, result.stderr).toBe(2);
  });

  it("20,000 unknown keys: the first 20 problems and a count of the rest", async () => {
    const keys = Array.from({ length: 20_000 }, (_, index) => `"k${index}": 1`).join(", ");
    const result = await runCliInProcess(["validate", write("keys.json", `{"name": "x", ${keys}}`)], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr.startsWith("lllm: error: 20000 problems (the first 20 shown):\n  keys.json:1:15: unknown key `k0` at the top level\n")).toBe(true);
    expect(result.stderr.match(/unknown key `k\d+`/g)).toHaveLength(20);
    expect(result.stderr).toContain("unknown key `k19` at the top level");
    expect(result.stderr.trimEnd().endsWith("… and 19980 more problems")).toBe(true);
  });

  it("thousands of duplicate keys in YAML are each found once, and the output stays short", async () => {
    const lines = Array.from({ length: 10_000 }, (_, index) => `k${index % 5000}: 1`);
    const result = await runCliInProcess(["validate", write("dups.yaml", `name: x\n${lines.join("\n")}\n`)], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("5000 problems (the first 20 shown):\n  dups.yaml:5002:1: duplicate key `k0`: each key may appear once in a mapping\n");
    expect(result.stderr.trimEnd().endsWith("… and 4980 more problems")).toBe(true);
  });

  it("collapses thousands of failing alternatives item by item", async () => {
    const servers = Array.from({ length: 3000 }, (_, index) => `{"name": "s${index}"}`).join(", ");
    const result = await runCliInProcess(["validate", write("mcp.json", `{"name": "x", "mcp_servers": [${servers}]}`)], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("3000 problems (the first 20 shown):\n  mcp.json:1:31: mcp_servers[0] must set `command` or `url`\n");
    expect(result.stderr.match(/must set `command` or `url`/g)).toHaveLength(20);
  });
});

describe("control characters from config files (issue 9 item 13)", () => {
  it("escapes them in unknown-key errors: no terminal escape reaches stderr, no key forges a line", async () => {
    const file = write("ctl.yaml", 'name: x\n"bad\\e[31mkey\\nfake: line": 1\nglobal:\n  "mo\\u202edel": 1\n');
    const result = await runCliInProcess(["validate", file], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(result.stderr).toContain("ctl.yaml:2:1: unknown key `bad\\u001b[31mkey\\nfake: line` at the top level");
    expect(result.stderr).toContain("ctl.yaml:4:3: unknown key `mo\\u202edel` in global");
  });

  it("escapes them in duplicate-key errors", async () => {
    const result = await runCliInProcess(["validate", write("dup-ctl.yaml", 'name: x\n"a\\e[2J": 1\n"a\\e[2J": 2\n')], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toBe("lllm: error: dup-ctl.yaml:3:1: duplicate key `a\\u001b[2J`: each key may appear once in a mapping\n");
  });

  it("escapes them in any other error that quotes a value from a file", async () => {
    const file = write("ref-ctl.yaml", 'name: x\nglobal:\n  model_name: m\n  tools: ["no\\e]0;pwned\\u0007such"]\nagent_configs:\n  - name: a\n    system_prompt: hi\n');
    const result = await runCliInProcess(["validate", file], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(result.stderr).toContain("no\\u001b]0;pwned\\u0007such");
  });
});
