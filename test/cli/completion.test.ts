import { spawnSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";

// Each case runs doctor (which probes the sandboxes) or the CLI several times: on a busy machine more than 30 s.
vi.setConfig({ testTimeout: 240_000 });
import { BIN, EXAMPLE, runCli } from "../helpers/runCli.js";
import { tempDir, tempTree } from "../helpers/tempTree.js";

let script = "";
let bin = "";
beforeAll(async () => {
  const result = await runCli(["completion", "bash"]);
  expect(result.code).toBe(0);
  script = path.join(tempDir("lllm-completion-"), "lllm.bash");
  writeFileSync(script, result.stdout);
  // `lllm` on PATH, as an installed one is: the script asks it for models and package refs.
  bin = tempDir("lllm-completion-bin-");
  writeFileSync(path.join(bin, "lllm"), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(path.join(bin, "lllm"), 0o755);
}, 60_000);

/** Load the script in a clean bash, complete the words (the last one being typed), print COMPREPLY one a line. */
function complete(words: string[], cwd = tempTree({ "a.yaml": "", "b.json": "", "notes.txt": "", "sub/c.yaml": "" })): string[] {
  const line = words.map((word) => `'${word}'`).join(" ");
  const program = `source '${script}'\nCOMP_WORDS=(lllm ${line})\nCOMP_CWORD=${words.length}\n_lllm\nprintf '%s\\n' "\${COMPREPLY[@]}"\n`;
  const result = spawnSync("bash", ["--norc", "--noprofile", "-c", program], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { PATH: `${bin}${path.delimiter}${process.env.PATH}`, HOME: process.env.HOME, LLLM_HOME: tempDir("lllm-home-") }, timeout: 60_000 });
  expect(result.stderr).toBe("");
  return result.stdout.split("\n").filter((word) => word !== "").sort();
}

describe("lllm completion bash", () => {
  it("completes commands, subcommands and flags", () => {
    expect(complete(["d"])).toEqual(["doctor"]);
    expect(complete(["ke"])).toEqual(["keys"]);
    expect(complete(["keys", ""])).toEqual(["get", "list", "path", "remove", "set"]);
    expect(complete(["run", "--max-st"])).toEqual(["--max-steps"]);
    // Global flags too, after the command.
    expect(complete(["validate", "--env"])).toEqual(["--env-file"]);
  });

  it("completes a flag's choices, and an argument's", () => {
    expect(complete(["logs", "--status", ""])).toEqual(["budget", "crashed", "error", "interrupted", "ok", "running"]);
    expect(complete(["init", "--template", "c"])).toEqual(["code-action"]);
    expect(complete(["schema", "p"])).toEqual(["package", "proxy"]);
    expect(complete(["completion", ""])).toEqual(["bash", "fish", "zsh"]);
  });

  it("completes tactic files (YAML, JSON, folders), and package refs after -p", () => {
    expect(complete(["run", ""])).toEqual(["a.yaml", "b.json", "sub/"]);
    const refs = complete(["run", "-p", path.join(EXAMPLE, "weather"), "weather.tactics:w"]);
    expect(refs).toEqual(["weather.tactics:weather"]);
  });

  it("completes model names from lllm's model list", () => {
    const models = complete(["run", "--model", "gpt-4o"]);
    expect(models).toContain("gpt-4o-mini");
    expect(models.every((name) => name.startsWith("gpt-4o"))).toBe(true);
    expect(complete(["run", "-m", "anthropic/claude-"]).length).toBeGreaterThan(0);
  });
});

describe("lllm completion zsh and fish", () => {
  it("print scripts that their shells' syntax accepts where the shell is installed, and an unknown shell is a usage error", async () => {
    const zsh = await runCli(["completion", "zsh"]);
    expect(zsh.code).toBe(0);
    expect(zsh.stdout).toContain("bashcompinit");
    const fish = await runCli(["completion", "fish"]);
    expect(fish.code).toBe(0);
    expect(fish.stdout).toContain("complete -c lllm -n '__fish_use_subcommand' -a 'run'");
    for (const [shell, text] of [["zsh", zsh.stdout], ["fish", fish.stdout]] as const) {
      if (spawnSync(shell, ["--version"], { stdio: "ignore" }).status !== 0) continue; // not installed here: the text checks above stand
      const file = path.join(tempDir("lllm-completion-"), `lllm.${shell}`);
      writeFileSync(file, text);
      expect(spawnSync(shell, ["-n", file], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).status).toBe(0);
    }
    const unknown = await runCli(["completion", "tcsh"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Allowed choices are bash, zsh, fish");
  });
});
