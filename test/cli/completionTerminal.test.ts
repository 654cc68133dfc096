import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE, runCli } from "../helpers/runCli.js";
import { HOSTILE_REFS, hostileRepo, lllmOnPath } from "../helpers/completionShells.js";
import { tempDir } from "../helpers/tempTree.js";
import { Tmux } from "../helpers/tmux.js";

/**
 * The completion scripts in the shells themselves, as a person uses them: TAB pressed at a bash and a zsh prompt
 * (tmux gives the terminal), fish's own completion engine (`complete -C`). zsh and fish are test dependencies
 * (.ci/run installs them): with CI=true these tests fail without them; elsewhere they are skipped, with a warning.
 */
const installed = (shell: string): boolean => spawnSync(shell, ["--version"], { stdio: "ignore" }).status === 0;
const required = (shell: string): boolean => {
  if (installed(shell) || process.env.CI === "true") return true;
  console.warn(`skipping the ${shell} completion tests (test/cli/completionTerminal.test.ts): ${shell} is not installed`);
  return false;
};
const HAS_ZSH = required("zsh");
const HAS_FISH = required("fish");

const weather = path.join(EXAMPLE, "weather");
const quote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;
const scripts: Record<"bash" | "zsh" | "fish", string> = { bash: "", zsh: "", fish: "" };
let bin = "";

beforeAll(async () => {
  const folder = tempDir("lllm-completion-");
  for (const shell of ["bash", "zsh", "fish"] as const) {
    const result = await runCli(["completion", shell]);
    expect(result.code, result.stderr).toBe(0);
    scripts[shell] = path.join(folder, `lllm.${shell}`);
    writeFileSync(scripts[shell], result.stdout);
  }
  bin = lllmOnPath();
}, 120_000);

const tmux = new Tmux();
afterAll(() => tmux.kill());
let sessions = 0;

/** Start `shell` (its words) in `cwd` at a tmux terminal, with only these variables; returns the session's name. */
function startShell(shell: string[], env: Record<string, string>, cwd: string): string {
  sessions += 1;
  const name = `c${sessions}`;
  const vars = Object.entries({ PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`, TERM: "xterm", LLLM_HOME: tempDir("lllm-home-"), ...env }).map(([key, value]) => `${key}=${quote(value)}`);
  tmux.run("new-session", "-d", "-s", name, "-x", "200", "-y", "50", "/bin/sh", "-c", `cd ${quote(cwd)} && exec env -i ${vars.join(" ")} ${shell.map(quote).join(" ")}`);
  return name;
}

/** The screen's lines that hold `text`, the last one. */
const lastLineWith = (screen: string, text: string): string => screen.split("\n").filter((line) => line.includes(text)).at(-1) ?? "";

/**
 * At a prompt whose completion is loaded: TAB after a command ends it with a space; a package ref completes
 * across its ':'; a package's file named `$(touch PWNED).yaml` is offered and inserted without running anything.
 * Keys typed during a completion wait for it, so the line reads as typed.
 */
async function typeAndComplete(session: string, repo: ReturnType<typeof hostileRepo>, listKeys: string[]): Promise<void> {
  tmux.type(session, "lllm ru");
  tmux.keys(session, "Tab");
  tmux.type(session, `-p ${weather} weather.tactics:w`);
  tmux.keys(session, "Tab");
  tmux.type(session, "X");
  await tmux.until(session, (screen) => screen.includes(`lllm run -p ${weather} weather.tactics:weather X`), "the command and the ref completed, each with a space after it");
  tmux.keys(session, "C-u");

  // TAB puts in what the refs have in common (`evil.tactics:`, with its ':' quoted by bash), then lists them, as
  // the names are (bash) or quoted (zsh).
  tmux.type(session, "lllm run evil.t");
  tmux.keys(session, ...listKeys);
  await tmux.until(session, (screen) => screen.includes("PWNED_BACKQUOTE") && screen.includes("PWNED_Q") && /touch\\? PWNED\\?\)/.test(screen), "the hostile refs, listed");
  tmux.keys(session, "C-u");
  // One of them inserted at the prompt, and the line entered as the arguments of `:` (which expands them, and
  // runs nothing else): the name is quoted, so nothing runs then either.
  tmux.type(session, "lllm run evil.tactics:q");
  tmux.keys(session, "Tab", "C-a");
  tmux.type(session, ": ");
  tmux.keys(session, "Enter");
  tmux.type(session, "echo ENTERED");
  tmux.keys(session, "Enter");
  await tmux.until(session, (screen) => /^ENTERED$/m.test(screen), "the lines to run");
  expect(repo.ran()).toEqual([]);
}

describe("completion at a real prompt", { timeout: 240_000 }, () => {
  it("bash: TAB completes with a space after a command, across a ref's ':', and runs nothing a file name holds", async () => {
    const repo = hostileRepo();
    const session = startShell(["bash", "--norc", "--noprofile", "-i"], { HOME: tempDir("lllm-home-"), PS1: "READY$ " }, repo.dir);
    tmux.type(session, `source ${quote(scripts.bash)}; echo SOURCED`);
    tmux.keys(session, "Enter");
    await tmux.until(session, (screen) => /^SOURCED$/m.test(screen), "the script loaded");
    // Readline lists on the TAB after one that changed nothing.
    await typeAndComplete(session, repo, ["Tab", "Tab", "Tab"]);
    // bash quotes what it inserts (its own quoting leaves `$` alone: `$\(` is no substitution).
    expect(lastLineWith(tmux.screen(session), "lllm run evil.tactics")).toContain(": lllm run evil.tactics:q$\\(touch\\ PWNED_Q)");
  });

  it.skipIf(!HAS_ZSH)("zsh: the same, with the .zshrc's own compinit", async () => {
    const repo = hostileRepo();
    const zdotdir = tempDir("lllm-zdotdir-");
    writeFileSync(path.join(zdotdir, ".zshrc"), `autoload -Uz compinit && compinit -u -D\nsource ${quote(scripts.zsh)}\nPROMPT='READY%% '\necho SOURCED\n`);
    const home = tempDir("lllm-home-");
    mkdirSync(home, { recursive: true });
    const session = startShell(["zsh", "-i"], { HOME: home, ZDOTDIR: zdotdir }, repo.dir);
    await tmux.until(session, (screen) => /^SOURCED$/m.test(screen), "the .zshrc loaded");
    await typeAndComplete(session, repo, ["Tab", "Tab"]);
    expect(lastLineWith(tmux.screen(session), "lllm run evil.tactics")).toContain(": lllm run evil.tactics:q\\$\\(touch\\ PWNED_Q\\)");
  });

  it.skipIf(!HAS_ZSH)("zsh: the script does not run compinit itself; loaded before it, it says so", () => {
    const result = spawnSync("zsh", ["-f", "-c", `source ${quote(scripts.zsh)}; print -r -- "status=$? compdef=$+functions[compdef]"`], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    expect(result.stdout.trim()).toBe("status=1 compdef=0");
    expect(result.stderr).toContain("lllm completion: load it after compinit (autoload -Uz compinit && compinit, in ~/.zshrc)");
  });
});

describe.skipIf(!HAS_FISH)("completion in fish", { timeout: 240_000 }, () => {
  /** fish's completions for `line` (the words offered, without their descriptions), in `cwd`. */
  function fishComplete(line: string, cwd: string, home = tempDir("lllm-home-")): string[] {
    const result = spawnSync("fish", ["--no-config", "-c", `source ${quote(scripts.fish)}; complete -C ${quote(line)}`], {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`, HOME: home, LLLM_HOME: home },
      timeout: 60_000,
    });
    expect(result.stderr).toBe("");
    return result.stdout.split("\n").filter((word) => word !== "").map((word) => word.split("\t")[0]!).sort();
  }

  it("offers refs, topics, providers and choices, and runs nothing of the folder", () => {
    const repo = hostileRepo();
    // fish offers every file for a tactic (the other shells: YAML and JSON files).
    expect(fishComplete("lllm run ", repo.dir)).toEqual(["$(touch PWNED_FILE).yaml", ...HOSTILE_REFS, "lllm.config.mjs", "lllm_packages/"].sort());
    expect(fishComplete(`lllm run -p ${weather} weather.tactics:w`, repo.dir)).toContain("weather.tactics:weather");
    expect(fishComplete("lllm help te", repo.dir)).toEqual(["test", "test-file", "testing"]);
    expect(fishComplete("lllm keys set an", repo.dir)).toEqual(["anthropic"]);
    expect(fishComplete("lllm exec --sandbox ", repo.dir)).toEqual(["auto", "bwrap", "gvisor", "none"]);
    expect(fishComplete("lllm logs show ", repo.dir)).toEqual(["last"]);
    expect(repo.ran()).toEqual([]);
  });
});
