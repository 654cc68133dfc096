import { spawnSync } from "node:child_process";
import { readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, ROOT } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempTree.js";

// bin/lllm.js is CommonJS (bin/package.json): an ES module as Node's main script starts its ES module loader first,
// ~10 ms of every start on Node 20, which `lllm --version` never uses. Checked from inside a fresh node: a preloaded
// CommonJS file lists, at exit, the CommonJS modules loaded and Node's own modules (`process.moduleLoadList`).
const dir = tempDir("lllm-launcher-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const preload = path.join(dir, "list.cjs");
writeFileSync(preload, 'process.on("exit", () => require("node:fs").writeFileSync(process.env.LIST, JSON.stringify({ cjs: Object.keys(require.cache), node: process.moduleLoadList })));\n');

/** What node loaded running `args` (after the preload): its CommonJS modules and Node's own ES-loader modules. */
function loadedBy(args: string[], name: string): { stdout: string; cjs: string[]; esmInternals: string[] } {
  const list = path.join(dir, `${name}.json`);
  const result = spawnSync(process.execPath, ["--require", preload, ...args], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LIST: list }, encoding: "utf8" });
  expect(result.status, result.stderr).toBe(0);
  const { cjs, node } = JSON.parse(readFileSync(list, "utf8")) as { cjs: string[]; node: string[] };
  return { stdout: result.stdout, cjs, esmInternals: node.filter((module) => module.includes("internal/modules/esm/")) };
}

describe("the lllm launcher", () => {
  it("runs as CommonJS, and `--version` starts no more of Node's ES module loader than `node -e 0` does", () => {
    const version = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }).version;
    const launcher = loadedBy([BIN, "--version"], "version");
    expect(launcher.stdout).toBe(`${version}\n`);
    expect(launcher.cjs).toContain(realpathSync(BIN));
    // Node 24 starts its ES module loader for any script (require of ES modules); Node 20 and 22 only for an ES one.
    const bare = loadedBy(["-e", "0"], "bare");
    expect(launcher.esmInternals.filter((module) => !bare.esmInternals.includes(module))).toEqual([]);
  });
});
