import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { findPython } from "./findPython.js";
import { maskedStdio } from "./inheritedDescriptors.js";
import type { Sandbox } from "./Sandbox.js";

/** Options of a SubprocessSandbox. */
export interface SubprocessSandboxOptions {
  /** Seconds a cell may run before its process (and what it started) is killed. Default 30. */
  timeout?: number;
  /** The Python command; default `python3` on PATH. */
  python?: string;
  /** Working folder of each cell; default the current folder. */
  cwd?: string;
}

/**
 * Each cell in a fresh `python3 -c` process: no shared state, no bridge, no isolation (seed 000, Step 17). The
 * smallest honest Sandbox: the output is stdout then stderr.
 */
export class SubprocessSandbox implements Sandbox {
  constructor(private readonly options: SubprocessSandboxOptions = {}) {}

  async run(code: string): Promise<string> {
    const python = await findPython(this.options.python);
    const timeout = this.options.timeout ?? 30;
    return new Promise((resolve) => {
      // No host variables: API keys stay out of reach of the code, as in the kernels.
      const env = { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", LANG: "C.UTF-8" };
      // Descriptors lllm's parent left open become /dev/null in the child (see maskedStdio).
      const devNull = openSync("/dev/null", "r+");
      const stdio = maskedStdio(["ignore", "pipe", "pipe"], devNull) as ["ignore", "pipe", "pipe"];
      const child = spawn(python.executable, ["-I", "-c", code], { cwd: this.options.cwd ?? process.cwd(), env, stdio, detached: true });
      closeSync(devNull);
      const stdout: Buffer[] = [];
      const stderr: Buffer[] = [];
      child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
      child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        try {
          process.kill(-child.pid!, "SIGKILL"); // the group: whatever the cell started dies with it
        } catch {
          child.kill("SIGKILL");
        }
      }, timeout * 1000);
      let settled = false;
      const finish = (extra: string): void => {
        if (settled) return; // "error" and "close" can both come
        settled = true;
        clearTimeout(timer);
        resolve(Buffer.concat(stdout).toString("utf8") + Buffer.concat(stderr).toString("utf8") + extra);
      };
      child.on("error", (error) => finish(`cannot run Python: ${error.message}`));
      child.on("close", () => finish(timedOut ? `TimeoutError: cell exceeded the time limit of ${timeout} s\n` : ""));
    });
  }
}
