import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { generatedFiles, staleGeneratedFiles } from "../../src/cli/reference/generatedFiles.js";
import { schemaReference } from "../../src/cli/reference/schemaReference.js";
import { buildProgram } from "../../src/cli/main.js";
import { commandPath } from "../../src/cli/helpExamples.js";
import { ERROR_CODES } from "../../src/errorCodes.js";
import { ROOT } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

const REGENERATE = "Run `npm run docs` to regenerate them, and commit the result.";

function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(allCommands)];
}

describe("the generated reference pages", { timeout: 120_000 }, () => {
  const files = generatedFiles();
  const page = (name: string): string => files.find((file) => file.path === `docs/reference/${name}.md`)!.text;

  it("are what `npm run docs` writes from the code", () => {
    expect(staleGeneratedFiles(ROOT, files).map((file) => file.problem), REGENERATE).toEqual([]);
  });

  it("fail the check when a page differs or is missing, and `npm run docs -- --check` says how to regenerate them", () => {
    const copy = tempDir();
    for (const file of files) {
      mkdirSync(path.dirname(path.join(copy, file.path)), { recursive: true });
      copyFileSync(path.join(ROOT, file.path), path.join(copy, file.path));
    }
    expect(staleGeneratedFiles(copy, files)).toEqual([]);
    writeFileSync(path.join(copy, "docs/reference/cli.md"), page("cli").replace("## lllm run\n", "## lllm run (edited by hand)\n"));
    rmSync(path.join(copy, "docs/reference/error-codes.md"));
    const stale = staleGeneratedFiles(copy, files);
    expect(stale.map((file) => file.path)).toEqual(["docs/reference/cli.md", "docs/reference/error-codes.md"]);
    expect(stale[0]!.problem).toContain('in the file: "## lllm run (edited by hand)"');
    expect(stale[1]!.problem).toBe("docs/reference/error-codes.md is missing");

    // The script itself, from another folder, another HOME and time zone: on this clone, current (exit 0). jiti keeps
    // its transpiled files in the suite's temp folder (TMPDIR), which jiti ignores when it is the working folder
    // unless told not to.
    const elsewhere = { cwd: os.tmpdir(), encoding: "utf8" as const, timeout: 90_000, env: { PATH: process.env.PATH, HOME: tempDir(), TZ: "Pacific/Kiritimati", LANG: "C", TMPDIR: process.env.TMPDIR, JITI_RESPECT_TMPDIR_ENV: "1" } };
    const jiti = path.join(ROOT, "node_modules/jiti/lib/jiti-cli.mjs");
    const check = spawnSync(process.execPath, [jiti, path.join(ROOT, "scripts/docs.ts"), "--check"], elsewhere);
    expect(check.stderr).toBe("");
    expect(check).toMatchObject({ status: 0, stdout: "the generated files are current\n" });
  });

  it("are the same on every machine: no date, no path or name of this machine, no colour", () => {
    expect(generatedFiles()).toEqual(files);
    const today = new Date().toISOString().slice(0, 10);
    for (const file of files) {
      for (const local of [ROOT, os.homedir(), os.tmpdir(), os.hostname(), today]) expect(file.text.includes(local), `${file.path} holds ${local}`).toBe(false);
      expect(file.text, file.path).not.toContain("\u001b");
    }
  });

  it("cover every command and option, every key of each file format, and every error code", () => {
    const cli = page("cli");
    for (const command of allCommands(buildProgram())) {
      const name = commandPath(command);
      if (name !== "") expect(cli, name).toContain(`# lllm ${name}\n`);
      for (const option of command.options.filter((option) => !option.hidden)) expect(cli, `${name} ${option.flags}`).toContain(`| \`${option.flags}\` |`);
    }
    const errors = page("error-codes");
    for (const code of ERROR_CODES) expect(errors, code).toMatch(new RegExp(`### \`${code}\`\\n\\n\\S.+ \\*\\*Fix:\\*\\* \\S`));
    for (const [name, keys] of Object.entries({ "tactic-file": ["tactic_type", "agent_configs", "limits.max_cost", "sandbox.backend"], "test-file": ["cases", "expect-exit", "tool-called"], "package-manifest": ["dependencies.packages"], "proxy-file": ["endpoints[].endpoint"], settings: ["prices.*.input", "reply_size"] })) {
      for (const key of keys) expect(page(name), `${name}: ${key}`).toMatch(new RegExp(`^\\| \`${key.replace(/[.*[\]]/g, "\\$&")}\` \\| [^|]+ \\|[^|]*\\| \\S`, "m"));
    }
  });

  it("refuse a schema key without a description, naming every such key", () => {
    const schema = { type: "object", properties: { model: { type: "string", description: "The model." }, home: { type: "string" }, limits: { type: "object", description: "Limits.", properties: { max_cost: { type: "number" } } } } };
    expect(() => schemaReference({ title: "T", intro: "I", source: "settings.json", schema })).toThrow("settings.json: these keys have no description, which the reference page needs:\n  the top level: home\n  the top level: limits.max_cost");
  });
});
