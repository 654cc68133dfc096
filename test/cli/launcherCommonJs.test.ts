import { spawnSync } from "node:child_process";
import { closeSync, openSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
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

/** What node loaded running `args` (after the preload): its CommonJS modules and Node's own modules and bindings. */
function loadedBy(args: string[], name: string): { stdout: string; cjs: string[]; node: string[] } {
  const list = path.join(dir, `${name}.json`);
  // stdout a pipe, as in `v=$(lllm --version)`, where Node's stdout stream is a socket.
  const result = spawnSync(process.execPath, ["--require", preload, ...args], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LIST: list }, encoding: "utf8" });
  expect(result.status, result.stderr).toBe(0);
  const { cjs, node } = JSON.parse(readFileSync(list, "utf8")) as { cjs: string[]; node: string[] };
  return { stdout: result.stdout, cjs, node };
}

describe("the lllm launcher", () => {
  it("runs as CommonJS, and `--version` loads none of Node's modules that `node -e 0` does not (its ES module loader, stdout's stream)", () => {
    const version = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }).version;
    const launcher = loadedBy([BIN, "--version"], "version");
    expect(launcher.stdout).toBe(`${version}\n`);
    expect(launcher.cjs).toContain(realpathSync(BIN));
    // Node 24 starts its ES module loader for any script (require of ES modules); Node 20 and 22 only for an ES one.
    // `process.stdout` on a pipe loads `net` and the stream modules (a tenth of `node -e 0`'s start): the version is
    // written to the descriptor.
    const bare = loadedBy(["-e", "0"], "bare");
    expect(launcher.node.filter((module) => !bare.node.includes(module))).toEqual([]);
  });

  it("`--version` that cannot be written says so and exits 1; to a reader that is gone, exits 0 quietly", () => {
    const full = openSync("/dev/full", "w"); // Linux: every write fails with ENOSPC
    try {
      const result = spawnSync(process.execPath, [BIN, "--version"], { stdio: ["ignore", full, "pipe"], encoding: "utf8" });
      expect(result.status).toBe(1);
      expect(result.stderr).toBe("lllm: could not print the version: ENOSPC: no space left on device, write\n");
    } finally {
      closeSync(full);
    }
    // `true` reads nothing and may be gone before the line is written (EPIPE) or not: exit 0 and nothing said, either way.
    const gone = spawnSync("bash", ["-c", `"${process.execPath}" "${BIN}" --version | true; echo "\${PIPESTATUS[0]}"`], { encoding: "utf8" });
    expect(gone.stdout).toBe("0\n");
    expect(gone.stderr).toBe("");
  });
});
