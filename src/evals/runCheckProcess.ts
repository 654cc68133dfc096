import { spawn } from "node:child_process";
import { redactSecrets } from "../util/redact.js";

/** How a check's process ended. */
export type CheckProcessOutcome =
  | { kind: "exited"; code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }
  | { kind: "timeout" }
  | { kind: "not_found"; program: string }
  | { kind: "failed"; message: string };

export interface CheckProcessOptions {
  command: readonly string[];
  input: string;
  cwd: string;
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

/** What is kept of a check's output: enough for a reason, never a flood. */
const MAX_OUTPUT = 1024 * 1024;

/**
 * Run a check's program (a `script`, or a `javascript` check's runner) in its own process group: it gets `input`
 * on stdin, and past `timeoutMs` (or on abort) the whole group is killed, so a check that hangs or leaves children
 * behind costs its case, never the test run.
 */
export function runCheckProcess(options: CheckProcessOptions): Promise<CheckProcessOutcome> {
  return new Promise((resolve) => {
    const [program, ...args] = options.command;
    if (program === undefined) return resolve({ kind: "failed", message: "the command is empty" });
    if (options.signal?.aborted) return resolve({ kind: "failed", message: "the test run was stopped" });
    const child = spawn(program, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["pipe", "pipe", "pipe"], detached: process.platform !== "win32" });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    let settled = false;
    const kill = (): void => {
      try {
        if (child.pid !== undefined && process.platform !== "win32") process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    const onAbort = (): void => kill();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const finish = (outcome: CheckProcessOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve(outcome);
    };
    child.stdout.on("data", (chunk: Buffer) => {
      if (stdout.length < MAX_OUTPUT) stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < MAX_OUTPUT) stderr += chunk.toString("utf8");
    });
    child.stdin.on("error", () => {}); // a check that does not read its input closes stdin early
    child.stdin.end(options.input);
    child.on("error", (error: NodeJS.ErrnoException) => finish(error.code === "ENOENT" ? { kind: "not_found", program } : { kind: "failed", message: error.message }));
    child.on("close", (code, signal) => {
      // The group may hold a child that outlived the check (a daemon it started): it goes too.
      kill();
      finish(timedOut ? { kind: "timeout" } : { kind: "exited", code, signal, stdout, stderr });
    });
  });
}

/**
 * The last lines of a program's output, for a reason. Redacted before it is cut: a check may print a key (it runs
 * with the environment), and a key cut in two is no longer found whole by the redaction of what is printed.
 */
export function outputTail(text: string, lines = 12, chars = 1500): string {
  let tail = redactSecrets(text.trimEnd().split("\n").slice(-lines).join("\n").trim());
  if (tail.length > chars) tail = `…${tail.slice(-chars)}`;
  return tail;
}
