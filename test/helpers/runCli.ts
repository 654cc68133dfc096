import { spawn } from "node:child_process";
import { BIN, ROOT } from "./paths.js";
import { tempDir } from "./tempTree.js";

export { BIN, EXAMPLE, ROOT } from "./paths.js";

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
}

/**
 * An empty `$LLLM_HOME` so that a developer's own ~/.lllm never leaks into a test (and the run store writes its
 * logs.db there); removed after the test file.
 */
export function emptyHome(): string {
  return tempDir("lllm-home-");
}

/**
 * The clean environment a test's CLI runs with: PATH, HOME, the suite's TMPDIR, an empty LLLM_HOME, no colour, no
 * keys; and the suite's one code cache (LLLM_CODE_CACHE, see globalSetup), so that each CLI does not compile lllm
 * again and write its caches at exit (nearly three times the CPU of a start). `extra` comes last: a test of the
 * caches gives `LLLM_CODE_CACHE: undefined` to start without it.
 */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_HOME: emptyHome(), LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, NO_COLOR: "1", ...extra };
}

/**
 * Run the built CLI as a user would, with a clean environment (`cleanEnv`): no colour, no keys, an empty LLLM_HOME.
 * A CLI still running after `timeoutMs` (default a minute: a run with a sandbox or MCP servers takes seconds on an
 * idle machine, far longer on a busy one) is killed, and its result has code null.
 */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env = cleanEnv(options.env);
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    // A command that never reads its input may be gone before the input reaches it (a busy machine): EPIPE then says
    // nothing about the command, whose exit code and output do. Unhandled, it was an uncaught exception of the suite.
    child.stdin.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") reject(error);
    });
    child.stdin.end(options.input ?? "");
  });
}
