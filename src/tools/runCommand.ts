import type childProcess from "node:child_process";
import { existsSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { ToolError } from "../errors.js";
import { terminalText } from "../util/terminalText.js";
import { COMMAND_MARK_VARIABLE, killCommandTree, newCommandMark, trackCommand, untrackCommand } from "./commandProcesses.js";
import { showsCommandStderr } from "./toolScope.js";
import { requireNow } from "../util/lazyModule.js";

/** How to run a command tool's program. */
export interface RunCommandOptions {
  /** The program and its arguments; no shell is involved. */
  command: readonly string[];
  /** Written to the program's stdin (the arguments as JSON). */
  input: string;
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  /** Where the tool is declared, for hints. */
  file?: string | undefined;
}

/** The tail of stderr that becomes the error message: enough to show a traceback's end without flooding the model. */
const STDERR_LINES = 20;
const STDERR_CHARS = 2000;

/**
 * Run a program, feed it `input` on stdin, and resolve with its stdout. A failure rejects with a ToolError whose
 * message is meant for the model: the tail of stderr for a non-zero exit, or what happened (not found, timed
 * out, cancelled). The program runs in its own process group, with a mark in its environment (see
 * `commandProcesses`): a timeout or an abort kills the group, everything below the program and everything carrying
 * the mark (a `setsid` grandchild included), and what it leaves behind ends when lllm does.
 */
export function runCommand(options: RunCommandOptions): Promise<string> {
  const label = options.command.join(" ");
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new ToolError("tool_command_aborted", `command \`${label}\` was not started: the run was cancelled`));
      return;
    }
    const [program, ...args] = options.command;
    const mark = newCommandMark();
    // child_process is `require`d with the first command tool a run calls: most runs call none.
    const { spawn } = requireNow<typeof childProcess>("node:child_process");
    const child = spawn(program!, args, { cwd: options.cwd, env: { ...(options.env ?? process.env), [COMMAND_MARK_VARIABLE]: mark }, stdio: ["pipe", "pipe", "pipe"], detached: process.platform !== "win32" });
    if (child.pid !== undefined) trackCommand(child.pid, mark);
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let stopped: ToolError | undefined;
    let settled = false;

    const kill = (): void => {
      if (child.pid !== undefined) killCommandTree(child.pid, mark);
      child.kill("SIGKILL"); // the group may be gone already; make sure the child is too
    };
    const stop = (error: ToolError): void => {
      stopped ??= error;
      kill();
    };
    const timer = setTimeout(() => {
      stop(new ToolError("tool_command_timeout", `command \`${label}\` timed out after ${options.timeoutMs / 1000} s and was killed`, {
        hint: `Raise \`timeout:\` (seconds)${options.file ? ` in ${options.file}` : ""} if the program needs longer.`,
      }));
    }, options.timeoutMs);
    const onAbort = (): void => stop(new ToolError("tool_command_aborted", `command \`${label}\` was cancelled`));
    options.signal?.addEventListener("abort", onAbort, { once: true });

    const finish = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      outcome();
    };

    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    // Whole characters only: a chunk may end inside one.
    const decoder = new StringDecoder("utf8");
    child.stderr.on("data", (chunk: Buffer) => {
      stderr.push(chunk);
      // The program's stderr is its log: shown as it comes when asked (the CLI marks each line with the tool's
      // name), with its control characters escaped; its tail is also the error message when the program fails.
      if (showsCommandStderr()) process.stderr.write(terminalText(decoder.write(chunk)));
    });
    // A program that does not read its input closes stdin early; that is not an error.
    child.stdin.on("error", () => {});
    child.stdin.end(options.input);

    child.on("error", (error: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) untrackCommand(child.pid);
      finish(() => {
        if (error.code === "ENOENT") {
          const missingDir = !existsSync(options.cwd);
          reject(new ToolError("tool_command_not_found", missingDir ? `cannot run \`${label}\`: its working folder ${options.cwd} does not exist` : `cannot run \`${label}\`: program \`${program}\` was not found`, {
            hint: `Install \`${program}\` or fix \`command:\`${options.file ? ` in ${options.file}` : ""}; the program is looked up on PATH, or relative to the declaration's folder when it contains a /.`,
            cause: error,
          }));
        } else {
          reject(new ToolError("tool_command_failed", `cannot run \`${label}\`: ${error.message}`, { cause: error }));
        }
      });
    });

    // "exit": the pid may be reused from now on. What the program left running is still found by its mark.
    child.on("exit", () => {
      if (child.pid !== undefined) untrackCommand(child.pid);
    });
    child.on("close", (code, signal) => {
      finish(() => {
        if (stopped) return reject(stopped);
        if (code === 0) return resolve(Buffer.concat(stdout).toString("utf8"));
        const tail = stderrTail(Buffer.concat(stderr).toString("utf8"));
        if (tail) return reject(new ToolError("tool_command_failed", tail));
        reject(new ToolError("tool_command_failed", code === null ? `command was killed by signal ${signal ?? "unknown"}` : `command exited with code ${code}`));
      });
    });
  });
}

/** The last lines of stderr, at most STDERR_LINES lines and STDERR_CHARS characters. */
function stderrTail(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  let tail = lines.slice(-STDERR_LINES).join("\n").trim();
  if (tail.length > STDERR_CHARS) tail = `...${tail.slice(-STDERR_CHARS)}`;
  return tail;
}
