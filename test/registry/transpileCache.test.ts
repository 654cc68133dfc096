import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../helpers/runCli.js";

// Each case spawns the CLI several times (the first transpiles): on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

describe("the transpile cache of TypeScript package files", () => {
  it("lives in $LLLM_HOME/cache/jiti, readable by this user alone, never in the shared temp folder", async () => {
    const home = tempDir("lllm-home-");
    const temp = tempDir("lllm-tmp-");
    const pkg = tempDir("lllm-pkg-");
    mkdirSync(path.join(pkg, "tools"));
    writeFileSync(path.join(pkg, "lllm.yaml"), "name: cached\nversion: 0.1.0\n");
    writeFileSync(
      path.join(pkg, "tools", "shout_cached.ts"),
      'import { tool } from "lllm";\nexport default tool({ name: "shout_cached", description: "Shout", parameters: { text: { type: "string" } }, run: ({ text }: { text: string }) => text.toUpperCase() });\n',
    );
    // TMPDIR points the child's os.tmpdir() (jiti's default cache folder) at a folder this test can look into.
    const result = await runCli(["tools", "list", "-p", pkg], { env: { LLLM_HOME: home, LLLM_CODE_CACHE: undefined, TMPDIR: temp }, timeoutMs: 90_000 });
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("shout_cached");

    const cache = path.join(home, "cache", "jiti");
    expect(readdirSync(cache).some((name) => name.includes("shout_cached"))).toBe(true);
    expect(statSync(cache).mode & 0o077).toBe(0);
    const shared = path.join(temp, "jiti");
    expect(existsSync(shared) ? readdirSync(shared).filter((name) => name.includes("shout_cached")) : []).toEqual([]);
  });
});

describe("the transpile cache of a program that uses lllm as a library", () => {
  it("is $LLLM_HOME/cache/jiti as well, never the shared temp folder another user could plant code in", async () => {
    const home = tempDir("lllm-home-");
    const temp = tempDir("lllm-tmp-");
    // os.tmpdir(), jiti's default folder, reads TMPDIR when asked.
    const file = path.join(tempDir("lllm-pkg-"), "shout_library.ts");
    writeFileSync(file, "export default (text: string): string => text.toUpperCase();\n");
    vi.stubEnv("LLLM_HOME", home);
    vi.stubEnv("LLLM_CODE_CACHE", undefined); // the suite's own (globalSetup): this test is of the default
    vi.stubEnv("TMPDIR", temp);
    let loaded: Record<string, unknown>;
    try {
      const { importModule } = await import("../../src/registry/importModule.js");
      loaded = await importModule(file);
    } finally {
      vi.unstubAllEnvs(); // the later tests' temp folders are the suite's again
    }
    expect((loaded.default as (text: string) => string)("hi")).toBe("HI");
    expect(readdirSync(path.join(home, "cache", "jiti")).some((name) => name.includes("shout_library"))).toBe(true);
    expect(existsSync(path.join(temp, "jiti"))).toBe(false);
  });
});

describe("a warm import of a TypeScript tool file", () => {
  const home = (): string => tempDir("lllm-home-");
  /** The package: a tool that throws a ToolError of lllm's, one that uses zod and node:path, one with a relative import. */
  function pkg(): string {
    const dir = tempDir("lllm-pkg-");
    mkdirSync(path.join(dir, "tools"));
    mkdirSync(path.join(dir, "lib"));
    writeFileSync(path.join(dir, "lllm.yaml"), "name: warm\nversion: 0.1.0\n");
    writeFileSync(path.join(dir, "tools", "refuse.ts"), 'import { tool, ToolError } from "lllm";\n\nexport default tool({ name: "refuse", description: "Refuses", run: () => {\n  throw new ToolError("refused_here", "not today");\n} });\n');
    writeFileSync(path.join(dir, "tools", "base_name.ts"), 'import { tool } from "lllm";\nimport { z } from "zod";\nimport path from "node:path";\nenum Mode { Plain = "plain" }\nexport const base_name = tool({ name: "base_name", description: "Base name", parameters: z.object({ file: z.string() }), run: ({ file }) => `${path.basename(file)} ${Mode.Plain} ${import.meta.url.endsWith("base_name.ts")}` });\n');
    writeFileSync(path.join(dir, "lib", "twice.ts"), "export const twice = (text: string): string => text + text;\n");
    writeFileSync(path.join(dir, "tools", "double.ts"), 'import { tool } from "lllm";\nimport { twice } from "../lib/twice.ts";\nexport default tool({ name: "double", description: "Double", parameters: { text: { type: "string" } }, run: ({ text }: { text: string }) => twice(text) });\n');
    return dir;
  }
  const listModules = (dir: string): { hook: string; list: string } => {
    const list = path.join(dir, "modules.txt");
    const hook = path.join(dir, "list-modules.cjs");
    writeFileSync(hook, `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(list)}, Object.keys(require.cache).join("\\n")));\n`);
    return { hook, list };
  };

  it("gives the same results as the first (transpiling) one, and a warm run of plain tool files does not load jiti", async () => {
    const dir = pkg();
    const env = { LLLM_HOME: home() };
    const calls = [
      ["tools", "call", "base_name", "-p", dir, "--args", '{"file": "/a/b/c.txt"}'],
      ["tools", "call", "refuse", "-p", dir, "--verbose"],
      ["tools", "call", "double", "-p", dir, "--args", '{"text": "ab"}'],
    ];
    const cold = await Promise.all(calls.map((args) => runCli(args, { env, timeoutMs: 90_000 })));
    expect(cold[0]!.stdout).toContain("c.txt plain true");
    expect(cold[1]!.stdout).toContain("Error: not today"); // lllm knew the ToolError: the model reads its message
    expect(cold[1]!.stderr).toMatch(/refuse\.ts:4/); // --verbose names the tool's file and line
    expect(cold[2]!.stdout).toContain("abab");
    for (const [index, args] of calls.entries()) expect(await runCli(args, { env, timeoutMs: 90_000 })).toEqual(cold[index]);

    // Only plain tool files (lllm, zod, node: imports): jiti is not loaded at all once they are cached.
    const plain = tempDir("lllm-pkg-");
    mkdirSync(path.join(plain, "tools"));
    writeFileSync(path.join(plain, "lllm.yaml"), "name: plain\nversion: 0.1.0\n");
    writeFileSync(path.join(plain, "tools", "base_name.ts"), readFileSync(path.join(dir, "tools", "base_name.ts"), "utf8"));
    const { hook, list } = listModules(plain);
    const run = () => runCli(["tools", "call", "base_name", "-p", plain, "--args", '{"file": "x/y.md"}'], { env: { ...env, NODE_OPTIONS: `--require ${hook}` }, timeoutMs: 90_000 });
    const loadsJiti = () => readFileSync(list, "utf8").includes(`${path.sep}jiti${path.sep}`);
    expect((await run()).stdout).toContain("y.md plain true");
    expect(loadsJiti()).toBe(true); // the first run transpiles, so the check can see jiti being loaded
    expect((await run()).stdout).toContain("y.md plain true");
    expect(loadsJiti()).toBe(false);
  });

  it("runs the edited code after the file changes", async () => {
    const dir = pkg();
    const env = { LLLM_HOME: home() };
    const call = () => runCli(["tools", "call", "base_name", "-p", dir, "--args", '{"file": "/a/b/c.txt"}'], { env, timeoutMs: 90_000 });
    expect((await call()).stdout).toContain("c.txt plain");
    const file = path.join(dir, "tools", "base_name.ts");
    writeFileSync(file, readFileSync(file, "utf8").replace('Plain = "plain"', 'Plain = "edited"'));
    expect((await call()).stdout).toContain("c.txt edited");
  });
});
