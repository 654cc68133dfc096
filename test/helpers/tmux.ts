import { execFileSync } from "node:child_process";
import { expect } from "vitest";
import { BIN } from "./paths.js";
import { waitUntil } from "./waitUntil.js";

/**
 * tmux keeps its sockets in $TMUX_TMPDIR (not TMPDIR), /tmp by default, where they outlive the test: here they go
 * in the suite's own temp folder (globalSetup's TMPDIR), removed when the suite ends.
 */
export function tmuxEnv(): NodeJS.ProcessEnv {
  return process.env.TMPDIR ? { ...process.env, TMUX_TMPDIR: process.env.TMPDIR } : process.env;
}

/**
 * The CLI at a real terminal, as a person uses it: tmux on a private socket (its own server, no user config)
 * gives a pseudo-terminal, keys to type and the screen to read. tmux is a test dependency (.ci/run installs it);
 * without it these tests fail rather than skip. Call `kill()` in `afterAll`.
 */
export class Tmux {
  private readonly socket = `lllm-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private windows = 0;

  run(...args: string[]): string {
    return execFileSync("tmux", ["-L", this.socket, "-f", "/dev/null", ...args], { encoding: "utf8", env: tmuxEnv() });
  }

  /**
   * Start `lllm ARGS` in a new session with only `env` (and PATH, HOME, TERM); the shell then prints `EXIT=<code>`
   * and stays, so the screen can still be read. Returns the session's name. The shell is bash: on Ctrl-C it waits
   * to see whether lllm exits on its own (then goes on to print its code), where dash dies with the signal.
   */
  startLllm(args: string[], env: Record<string, string>, cwd: string): string {
    this.windows += 1;
    const name = `s${this.windows}`;
    const vars = Object.entries({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", TMPDIR: process.env.TMPDIR ?? "", LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE ?? "", TERM: "xterm", ...env }).map(([key, value]) => `${key}=${shellQuote(value)}`);
    const command = `cd ${shellQuote(cwd)} && env -i ${vars.join(" ")} ${shellQuote(process.execPath)} ${shellQuote(BIN)} ${args.map(shellQuote).join(" ")}; echo EXIT=$?; sleep 600`;
    this.run("new-session", "-d", "-s", name, "-x", "160", "-y", "50", "/bin/bash", "-c", command);
    return name;
  }

  /** The screen and its scrollback; `escapes`: with the colour codes. */
  screen(name: string, escapes = false): string {
    return this.run("capture-pane", "-p", "-J", ...(escapes ? ["-e"] : []), "-S", "-200", "-t", name);
  }

  /** Press keys by tmux's names (`Enter`, `C-c`, `Up`). */
  keys(name: string, ...keys: string[]): void {
    this.run("send-keys", "-t", name, ...keys);
  }

  /** Type text as it is (text that starts with `-` too). */
  type(name: string, text: string): void {
    this.run("send-keys", "-t", name, "-l", "--", text);
  }

  /** Wait until the screen satisfies `check`; fails the test with the screen when it does not within a minute. */
  async until(name: string, check: (text: string) => boolean, what: string): Promise<string> {
    let text = "";
    const ok = await waitUntil(() => check((text = this.screen(name))), 60_000);
    expect(ok, `waiting for ${what}; the screen:\n${text}`).toBe(true);
    return text;
  }

  kill(): void {
    try {
      this.run("kill-server");
    } catch {
      // no server left
    }
  }
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}
