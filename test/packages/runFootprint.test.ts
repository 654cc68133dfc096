import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { BIN } from "../helpers/runCli.js";
import { packageTarball } from "../helpers/tarball.js";
import { tempDir } from "../helpers/tempTree.js";
import { lllm, project, PROMPT_PACKAGE, writeFile } from "./packageFixtures.js";

// A run over installed packages reads the lock and the cache: it must not load what fetching needs (tar, npm's
// config loader, semver, ssri), which `lllm add` and `lllm install` load on first use.

describe("lllm run over an installed package", () => {
  it("loads none of tar, @npmcli/config, semver or ssri", async () => {
    const dir = project();
    writeFile(path.join(dir, "greet.tgz"), packageTarball(PROMPT_PACKAGE));
    const home = tempDir("lllm-home-");
    expect((await lllm(["add", "greet.tgz"], { cwd: dir, home })).code).toBe(0);
    const hooks = tempDir("lllm-hooks-");
    const list = path.join(hooks, "modules.txt");
    writeFileSync(list, "");
    writeFileSync(path.join(hooks, "hooks.mjs"), 'import { appendFileSync } from "node:fs";\nexport async function load(url, context, next) {\n  appendFileSync(process.env.MODULE_LIST, `${url}\\n`);\n  return next(url, context);\n}\n');
    writeFileSync(
      path.join(hooks, "register.mjs"),
      `import { appendFileSync } from "node:fs";\nimport { createRequire, register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(path.join(hooks, "hooks.mjs")).href)});\nconst require = createRequire(import.meta.url);\nprocess.on("exit", () => appendFileSync(process.env.MODULE_LIST, Object.keys(require.cache).join("\\n") + "\\n"));\n`,
    );
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", pathToFileURL(path.join(hooks, "register.mjs")).href, BIN, "run", "tactic.yaml", "--model", "scripted:script.yaml", "--input", "hi", "--no-log"], {
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_HOME: home, MODULE_LIST: list, NO_COLOR: "1" },
        stdio: "ignore",
      });
      child.on("error", reject);
      child.on("close", resolve);
    });
    expect(code).toBe(0);
    const modules = readFileSync(list, "utf8").split("\n").filter(Boolean);
    expect(modules.some((module) => module.includes("/dist/"))).toBe(true);
    expect(modules.filter((module) => /\/node_modules\/(?:tar|@npmcli\/config|semver|ssri)\/|\/dist\/bundle\/dep-(?:tar|semver|ssri|npmcli-config)-/.test(module))).toEqual([]);
  }, 120_000);
});
