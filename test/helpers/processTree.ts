import { execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { BIN, cleanEnv, ROOT } from "./runCli.js";

export { waitUntil } from "./waitUntil.js";

/** `pid` and every process below it, read from /proc (host pids, also for processes inside a sandbox). */
export function processTree(pid: number): number[] {
  const found = [pid];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter(Boolean)) found.push(...processTree(Number(child)));
    }
  } catch {
    // exited meanwhile
  }
  return found;
}

/** The command name of a process (`/proc/<pid>/comm`), or undefined when it is gone. */
export function commandName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return undefined;
  }
}

/** Whether a process runs; a zombie (exited, not reaped yet) counts as gone. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** A CLI process the test can signal while it runs. */
export interface RunningCli {
  pid: number;
  stdout(): string;
  stderr(): string;
  /**
   * Resolves with the exit code (or the signal that killed it), or "still running" after `ms`. Once it resolves with
   * a code, `stdout()` and `stderr()` hold all the CLI wrote (see `drained`).
   */
  exit(ms?: number): Promise<number | NodeJS.Signals | "still running">;
  /**
   * Resolves once the CLI's stdout has ended (all it wrote has been read), or "still open" after `ms`: on a busy
   * machine the last chunks of a large output arrive after the process's exit.
   */
  stdoutEnded(ms?: number): Promise<"ended" | "still open">;
  /** SIGKILL the CLI and every process below it (test clean-up). */
  killTree(): void;
}

/** Start the built CLI as `runCli` does (clean environment, empty LLLM_HOME), without waiting for it. */
export function startCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env: cleanEnv(options.env), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  // "exit", not "close": a process that outlives the CLI and holds its stdout must not hide the CLI's own exit.
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? -1)));
  const ended = new Promise<"ended">((resolve) => child.stdout.once("close", () => resolve("ended")));
  const bothClosed = Promise.all([ended, new Promise<void>((resolve) => child.stderr.once("close", () => resolve()))]);
  return {
    pid: child.pid!,
    stdout: () => stdout,
    stderr: () => stderr,
    exit: async (ms = 15_000) => {
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([exited, new Promise<"still running">((resolve) => (timer = setTimeout(() => resolve("still running"), ms)))]).finally(() => clearTimeout(timer));
      if (code !== "still running") await drained(bothClosed);
      return code;
    },
    stdoutEnded: (ms = 15_000) => {
      let timer: NodeJS.Timeout | undefined;
      return Promise.race([ended, new Promise<"still open">((resolve) => (timer = setTimeout(() => resolve("still open"), ms)))]).finally(() => clearTimeout(timer));
    },
    killTree: () => {
      for (const pid of processTree(child.pid!).reverse()) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    },
  };
}

/**
 * After a child's "exit" event, what it wrote last may still be in its pipes (the event can come first on a busy
 * machine): wait until both pipes have closed or, when a process it left behind holds them open, a moment; then
 * let the loop turn twice, so that its poll phase reads what is already in the pipes.
 */
async function drained(closed: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, 2000)))]).finally(() => clearTimeout(timer));
  for (let turn = 0; turn < 2; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Processes whose command line matches `pattern` and that no running lllm owns: their parent is not an lllm CLI
 * (a server lllm failed to stop is re-parented to init or a subreaper). Servers that concurrent tests' CLIs are
 * still using have an lllm parent, and servers that other test files start themselves (test/mcp spawns
 * server-everything from its vitest worker) have a vitest parent: neither counts, so the check holds while other
 * tests run beside it.
 */
export function orphanedProcesses(pattern: string): number[] {
  let pids: number[];
  try {
    pids = execFileSync("pgrep", ["-f", pattern], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
  return pids.filter((pid) => {
    const parent = parentPid(pid);
    if (parent === undefined || !isRunning(pid)) return false;
    const parentCommand = commandLine(parent);
    return !parentCommand.includes("bin/lllm.js") && !parentCommand.includes("/vitest/");
  });
}

function parentPid(pid: number): number | undefined {
  try {
    return Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  } catch {
    return undefined;
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/** The pid namespace of a process (`pid:[4026532…]`), or undefined when it is gone. */
export function pidNamespace(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/**
 * Host pids of the processes in one pid namespace (a sandbox's own), optionally only those of one uid and without
 * zombies. Unlike counting a uid machine-wide, this ignores what other tests run at the same time, and it still
 * finds a sandbox's processes after they are re-parented out of its process tree.
 */
export function processesInNamespace(namespace: string, options: { uid?: number; zombies?: boolean } = {}): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pidNamespace(pid) !== namespace) continue;
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      if (options.zombies === false && /^State:\s+Z/m.test(status)) continue;
      if (options.uid !== undefined && Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== options.uid) continue;
      pids.push(pid);
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}
