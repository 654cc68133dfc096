import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";

// Each case runs the CLI several times (each completion of a model, a ref or a run id is one): on a busy machine
// more than 30 s. The completions spawn the built CLI through bash, as a shell does; of the commands the tests run
// themselves, one of each (`completion zsh`, `run`, `logs path`, `doctor`, `help`, `validate`) spawns it too, end
// to end, and the others run its main() in this process.
vi.setConfig({ testTimeout: 240_000 });
import { EXAMPLE, ROOT, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { HOSTILE_REFS, hostileRepo, lllmOnPath } from "../helpers/completionShells.js";
import { tempDir, tempTree } from "../helpers/tempTree.js";

let script = "";
let bin = "";
beforeAll(async () => {
  const result = await runCliInProcess(["completion", "bash"]);
  expect(result.code, result.stderr).toBe(0);
  script = path.join(tempDir("lllm-completion-"), "lllm.bash");
  writeFileSync(script, result.stdout);
  bin = lllmOnPath();
}, 60_000);

/**
 * The words bash hands a completion function for `line` (the cursor at its end): split at blanks, and at ':', which
 * is in COMP_WORDBREAKS, so that `weather.tactics:w` arrives as `weather.tactics`, `:`, `w` (completionTerminal.test.ts
 * checks the same at a real bash prompt), but not at an escaped one (`\\:`, as bash inserts it). Quotes are not
 * handled: the lines here hold none.
 */
function bashWords(line: string): string[] {
  const words = line.split(/\s+/).filter((word) => word !== "").flatMap((word) => word.split(/((?<!\\):+)/).filter((piece) => piece !== ""));
  return /\s$/.test(line) ? [...words, ""] : words;
}

interface CompleteOptions {
  cwd?: string;
  home?: string;
}

/** Load the script in a clean bash, complete `line` as bash would at a prompt, print COMPREPLY one a line. */
function complete(line: string, options: CompleteOptions = {}): string[] {
  const words = bashWords(line);
  const quoted = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`;
  const program = `source ${quoted(script)}\nCOMP_WORDS=(${words.map(quoted).join(" ")})\nCOMP_CWORD=${words.length - 1}\nCOMP_LINE=${quoted(line)}\nCOMP_POINT=${line.length}\n_lllm\nprintf '%s\\n' "\${COMPREPLY[@]}"\n`;
  const cwd = options.cwd ?? tempTree({ "a.yaml": "", "b.json": "", "notes.txt": "", "sub/c.yaml": "" });
  const env = { PATH: `${bin}${path.delimiter}${process.env.PATH}`, HOME: process.env.HOME, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, LLLM_HOME: options.home ?? tempDir("lllm-home-") };
  const result = spawnSync("bash", ["--norc", "--noprofile", "-c", program], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env, timeout: 60_000 });
  expect(result.stderr).toBe("");
  return result.stdout.split("\n").filter((word) => word !== "").sort();
}

describe("lllm completion bash", () => {
  it("completes commands, subcommands and flags", () => {
    expect(complete("lllm d")).toEqual(["doctor"]);
    expect(complete("lllm ke")).toEqual(["keys"]);
    expect(complete("lllm keys ")).toEqual(["get", "list", "path", "remove", "set"]);
    expect(complete("lllm run --max-st")).toEqual(["--max-steps"]);
    // Global flags too, after the command.
    expect(complete("lllm validate --env")).toEqual(["--env-file"]);
    expect(complete("lllm validate --no-c")).toEqual(["--no-color"]);
  });

  it("completes a flag's choices, and an argument's", () => {
    expect(complete("lllm logs --status ")).toEqual(["budget", "crashed", "error", "interrupted", "ok", "running"]);
    expect(complete("lllm init --template c")).toEqual(["code-action"]);
    expect(complete("lllm schema p")).toEqual(["package", "proxy"]);
    expect(complete("lllm completion ")).toEqual(["bash", "fish", "zsh"]);
    expect(complete("lllm exec --sandbox ")).toEqual(["auto", "bwrap", "gvisor", "none"]);
  });

  it("completes help topics and commands, providers for keys, and run ids from the run store", async () => {
    expect(complete("lllm help ")).toEqual(expect.arrayContaining(["batch", "code-action", "getting-started", "packages", "proxies", "run", "tactics", "testing", "tools"]));
    // The topics are the documentation's pages (docs/README.md lists them): a page's topic and a command alike.
    expect(complete("lllm help te")).toEqual(["test", "test-file", "testing"]);
    expect(complete("lllm keys set an")).toEqual(["anthropic"]);
    expect(complete("lllm keys remove o")).toEqual(["openai", "openrouter"]);
    const home = tempDir("lllm-home-");
    const run = await runCli(["run", "packages-example/weather/tactics/weather.yaml", "--model", "scripted:packages-example/weather/scripted/paris-tokyo.yaml", "--input", "Paris and Tokyo?", "--json"], { env: { LLLM_HOME: home } });
    expect(run.code, run.stderr).toBe(0);
    const logged = await runCliInProcess(["logs", "--json"], { env: { LLLM_HOME: home } });
    const [id] = (JSON.parse(logged.stdout) as { runs: Array<{ id: string }> }).runs.map((entry) => entry.id);
    expect(id).toBeDefined();
    expect(complete("lllm logs show ", { home })).toEqual([id, "last"].sort());
    expect(complete(`lllm logs replay ${id!.slice(0, 4)}`, { home })).toEqual([id]);
    expect(complete("lllm run --continue ", { home })).toEqual([id, "last"].sort());
  });

  it("completes tactic files (YAML, JSON, folders)", () => {
    expect(complete("lllm run ")).toEqual(["a.yaml", "b.json", "sub/"]);
    expect(complete("lllm run s")).toEqual(["sub/"]);
  });

  it("completes package refs after -p across the ':' at which bash splits words", () => {
    const weather = path.join(EXAMPLE, "weather");
    // bash replaces the piece after the ':' only: that is what is offered once a ':' is typed.
    expect(complete(`lllm run -p ${weather} weather.tactics:w`)).toEqual(["weather"]);
    expect(complete(`lllm run -p ${weather} weather.tactics:`)).toEqual(["analyst", "briefing", "common", "desk", "weather"]);
    expect(complete(`lllm run -p ${weather} weath`)).toEqual(["weather.tactics:analyst", "weather.tactics:briefing", "weather.tactics:common", "weather.tactics:desk", "weather.tactics:weather"]);
    // The words after a ref are read as one word too: the ref is the tactic, the next word a flag's value.
    expect(complete(`lllm run -p ${weather} weather.tactics:weather --approve `)).toEqual(["all", "none"]);
  });

  it("completes model names from lllm's model list", () => {
    const models = complete("lllm run --model gpt-4o");
    expect(models).toContain("gpt-4o-mini");
    expect(models.every((name) => name.startsWith("gpt-4o"))).toBe(true);
    expect(complete("lllm run -m anthropic/claude-").length).toBeGreaterThan(0);
  });

  it("offers file names and package refs as they are: nothing in them runs, nor the folder's lllm.config.mjs or tool files", () => {
    const repo = hostileRepo();
    expect(complete("lllm run ", { cwd: repo.dir })).toEqual(["$(touch PWNED_FILE).yaml", ...HOSTILE_REFS, "lllm_packages/"].sort());
    expect(complete("lllm run evil.tactics:", { cwd: repo.dir })).toEqual(["$(touch PWNED)", "`touch PWNED_BACKQUOTE`", "q$(touch PWNED_Q)"]);
    expect(complete("lllm validate -p lllm_packages/evil evil.t", { cwd: repo.dir })).toEqual(HOSTILE_REFS);
    // The word as bash leaves it after a TAB (`evil.tactics\\:`, one word): the whole refs, as bash replaces it all.
    expect(complete("lllm run evil.tactics\\:", { cwd: repo.dir })).toEqual(HOSTILE_REFS);
    expect(repo.ran()).toEqual([]);
  });
});

describe("read-only commands run nothing of the folder they start in", () => {
  it("completion's lists, logs, doctor and help do not import lllm.config.mjs nor packages' tool files", async () => {
    const repo = hostileRepo();
    const home = tempDir("lllm-home-");
    for (const args of [["completion", "--list", "tactics"], ["completion", "--list", "runs"], ["completion", "--list", "models"], ["logs"], ["logs", "path"], ["doctor"], ["help"], ["help", "tactics"], ["--help"]]) {
      // `doctor` and `help` spawn the built CLI (their one spawn in this file); the rest run in this process.
      const cli = args.length === 1 && (args[0] === "doctor" || args[0] === "help") ? runCli : runCliInProcess;
      const result = await cli(args, { cwd: repo.dir, env: { LLLM_HOME: home } });
      expect(result.code, args.join(" ")).toBe(0);
      expect(repo.ran(), args.join(" ")).toEqual([]);
    }
    // What that leaves out is said, where it matters: the settings' `home:` (where the run store is).
    const logs = await runCli(["logs", "path"], { cwd: repo.dir, env: { LLLM_HOME: home } });
    expect(logs.stdout.trim()).toBe(path.join(home, "logs.db"));
    expect(logs.stderr).toContain("lllm: warning: lllm.config.mjs is code, which `lllm logs` does not run: a `home:` set there is not used here (set LLLM_HOME instead, or keep the settings in a data file such as .lllmrc.yaml)");
    // A run is another matter: it runs the folder's settings and tools, as it always did.
    await runCli(["validate", "-p", "lllm_packages/evil", "evil.tactics:$(touch PWNED)"], { cwd: repo.dir, env: { LLLM_HOME: home } });
    expect(repo.ran()).toEqual(["CONFIG_RAN", "TOOL_RAN"]);
  });
});

describe("lllm completion zsh and fish", () => {
  it("print scripts that their shells' syntax accepts, and an unknown shell is a usage error", async () => {
    const zsh = await runCli(["completion", "zsh"]);
    expect(zsh.code, zsh.stderr).toBe(0);
    expect(zsh.stdout).toContain("bashcompinit");
    const fish = await runCliInProcess(["completion", "fish"]);
    expect(fish.code, fish.stderr).toBe(0);
    expect(fish.stdout).toContain("complete -c lllm -n '__fish_use_subcommand' -a 'run'");
    for (const [shell, text] of [["zsh", zsh.stdout], ["fish", fish.stdout]] as const) {
      if (spawnSync(shell, ["--version"], { stdio: "ignore" }).status !== 0 && process.env.CI !== "true") {
        console.warn(`skipping the ${shell} syntax check (test/cli/completion.test.ts): ${shell} is not installed`);
        continue;
      }
      const file = path.join(tempDir("lllm-completion-"), `lllm.${shell}`);
      writeFileSync(file, text);
      expect(spawnSync(shell, ["-n", file], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], cwd: ROOT }).status).toBe(0);
    }
    const unknown = await runCliInProcess(["completion", "tcsh"]);
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain("Allowed choices are bash, zsh, fish");
  });
});
