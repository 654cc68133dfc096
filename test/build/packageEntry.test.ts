import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, cleanEnv } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

/** What a project that installs lllm gets: its entry points from CommonJS as from ESM, and its licence. */


describe("the package", () => {
  it("require(\"lllm\") and require(\"lllm/testing\") work from a CommonJS file", () => {
    const project = tempDir("lllm-cjs-");
    mkdirSync(path.join(project, "node_modules"));
    symlinkSync(ROOT, path.join(project, "node_modules", "lllm"), "dir");
    writeFileSync(
      path.join(project, "main.cjs"),
      [
        'const { tool, z, createModel } = require("lllm");',
        'const { ScriptedModel } = require("lllm/testing");',
        'const shout = tool({ name: "shout", description: "Upper-case", parameters: z.object({ text: z.string() }), run: ({ text }) => text.toUpperCase() });',
        "console.log(shout.name, typeof createModel, typeof ScriptedModel);",
      ].join("\n"),
    );
    const result = spawnSync(process.execPath, ["main.cjs"], { cwd: project, env: cleanEnv(), encoding: "utf8", timeout: 60_000 });
    expect(result.stderr).toBe("");
    expect(result).toMatchObject({ status: 0, stdout: "shout function function\n" });
  });

  // npm packs a LICENSE file at the root whatever `files` says.
  it("has a LICENSE that says what package.json says (MIT)", () => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { license: string };
    const license = readFileSync(path.join(ROOT, "LICENSE"), "utf8");
    expect(manifest.license).toBe("MIT");
    expect(license.split("\n")[0]).toBe("MIT License");
    expect(license).toContain("Copyright (c) the lllm authors");
    expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
  });
});
