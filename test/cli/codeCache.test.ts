import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import Module from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Script } from "node:vm";
import { afterAll, describe, expect, it, vi } from "vitest";
import { EXAMPLE, ROOT, runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

// The CLI is spawned several times: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

// The CLI keeps V8's compiled code of its one-file dependencies in $LLLM_HOME/cache/v8, on every Node: Node 22.1+'s
// own compile cache (of the bundle, in $LLLM_HOME/cache/node) keeps a file's top level only. What a user must see:
// the same results, whatever state that folder is in.
const dir = tempDir("lllm-code-cache-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const nodeHasCompileCache = typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === "function";

describe("the code cache of lllm's dependencies", () => {
  it("is kept, reused, and survives damaged data", async () => {
    const home = path.join(dir, "home");
    const folder = path.join(home, "cache", "v8");
    const validate = () => runCli(["validate", path.join(EXAMPLE, "weather", "tactics", "weather.yaml")], { env: { LLLM_HOME: home } });
    const first = await validate();
    expect(first.code).toBe(0);
    const node = path.join(home, "cache", "node");
    if (nodeHasCompileCache) {
      // Node's own cache, in a folder of this user's own rather than the shared temp folder.
      expect(readdirSync(node).length).toBeGreaterThan(0);
      expect(statSync(node).mode & 0o077).toBe(0);
    } else {
      expect(existsSync(node)).toBe(false);
    }
    const files = readdirSync(folder);
    expect(files.length).toBeGreaterThan(0);
    expect(await validate()).toEqual(first);
    // Data V8 rejects (here: not its format at all) is compiled again and written anew.
    for (const file of files) writeFileSync(path.join(folder, file), "not code");
    expect(await validate()).toEqual(first);
    expect(readdirSync(folder).sort()).toEqual(files.sort());
    // Under other V8 flags (here from NODE_OPTIONS) the data is kept apart, and the result is the same.
    const otherFlags = await runCli(["validate", path.join(EXAMPLE, "weather", "tactics", "weather.yaml")], { env: { LLLM_HOME: home, NODE_OPTIONS: "--max-old-space-size=1000" } });
    expect(otherFlags).toEqual(first);
    expect(readdirSync(folder).length).toBeGreaterThan(files.length);
  });
});

describe("the code cache of a file lllm requires compiled", () => {
  // Written when the process ends, it holds what the run called, not the top level alone: the next run compiles
  // neither (commander's parsing, the validators, the zod a tool used). Seen from outside: the data is larger than
  // V8's for the top level alone, and loading it again is accepted.
  it("holds the functions the run called, not only the top level (which is all Node 22's compile cache keeps)", async () => {
    const folder = path.join(dir, "functions");
    const file = path.join(folder, "called.cjs");
    mkdirSync(path.join(folder, "cache"), { recursive: true, mode: 0o700 });
    // A function with a large body, called after the top level has run.
    const body = Array.from({ length: 400 }, (_, index) => `  total += Math.sqrt(${index} + n) * ${index};`).join("\n");
    writeFileSync(file, `exports.work = function work(n) {\n  let total = 0;\n${body}\n  return total;\n};\n`);
    const codeCache = pathToFileURL(path.join(ROOT, "dist", "util", "codeCache.js")).href;
    const script = `const { useCodeCache, requireCompiled } = await import(${JSON.stringify(codeCache)});
const { createRequire } = await import("node:module");
useCodeCache(${JSON.stringify(path.join(folder, "cache"))});
const loaded = requireCompiled(${JSON.stringify(file)}, createRequire(import.meta.url));
console.log(loaded.work(2) > 0 ? "called" : "wrong");`;
    const once = () => spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(once().stdout).toBe("called\n");
    const [stored] = readdirSync(path.join(folder, "cache"));
    const data = readFileSync(path.join(folder, "cache", stored!));
    const topLevelOnly = new Script(Module.wrap(readFileSync(file, "utf8")), { filename: file }).createCachedData();
    expect(data.length).toBeGreaterThan(topLevelOnly.length * 2);
    // The next run loads it (V8 accepts it: the file is not written again) and gets the same result.
    const before = statSync(path.join(folder, "cache", stored!)).mtimeMs;
    expect(once().stdout).toBe("called\n");
    expect(statSync(path.join(folder, "cache", stored!)).mtimeMs).toBe(before);
  });
});
