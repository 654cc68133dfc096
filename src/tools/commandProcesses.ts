import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

/**
 * The environment variable every command tool's program gets, and every process it starts inherits: the call's
 * mark. A process that left the program's group and session (`setsid`, a daemon's double fork) and whose parent has
 * exited is found by it.
 */
export const COMMAND_MARK_VARIABLE = "LLLM_COMMAND_TOOL_MARK";

/** This process's share of the marks: `<pid>-<random>.<call>`. */
const instance = `${process.pid}-${randomBytes(6).toString("hex")}`;
let calls = 0;
/** Command tools running now: the program's pid (its process group's id) and its mark. */
const running = new Map<number, string>();
let installed = false;

/** A new mark for one call of a command tool. */
export function newCommandMark(): string {
  calls += 1;
  return `${instance}.${calls}`;
}

/**
 * Remember a command tool's program while it runs; the first one installs the exit hook that ends what command
 * tools left behind when this process ends (normally, by `process.exit`, or after a signal the CLI handled).
 */
export function trackCommand(pid: number, mark: string): void {
  running.set(pid, mark);
  if (installed) return;
  installed = true;
  process.on("exit", killAllCommandProcesses);
}

/** The program has exited: its pid may be given to another process, so it is no longer a group to kill by id. */
export function untrackCommand(pid: number): void {
  running.delete(pid);
}

/**
 * SIGKILL one call's processes, synchronously: the program's process group, every process below the program (by
 * parent, a child that cleared its environment included), and every process that carries the call's mark (one
 * that left the group and session, orphaned). Without /proc (macOS) only the group.
 */
export function killCommandTree(pid: number, mark: string): void {
  killTrees({ roots: [pid], marked: (value) => value === mark });
}

/**
 * SIGKILL every process of every command tool this process ran, running or left behind by one that ended: for the
 * CLI's signal handler and the exit hook. What a command tool leaves behind ends with lllm.
 */
export function killAllCommandProcesses(): void {
  if (calls === 0) return;
  killTrees({ roots: [...running.keys()], marked: (value) => value.startsWith(`${instance}.`) });
}

function signalGroup(pid: number): void {
  try {
    process.kill(process.platform === "win32" ? pid : -pid, "SIGKILL");
  } catch {
    // the group is gone already
  }
}

/**
 * The tree is read before anything is killed (a child that cleared its environment is found through its parent
 * while that parent lives); then the roots' groups and what was found are killed, and /proc is read once more for
 * what was forked meanwhile (a process killed with SIGKILL forks no more).
 */
function killTrees(target: { roots: number[]; marked: (value: string) => boolean }): void {
  const found = findProcesses(target);
  for (const pid of target.roots) signalGroup(pid);
  if (found.length === 0) return;
  killAll(found);
  killAll(findProcesses(target));
}

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/** The processes below `roots` (by parent) and those whose mark matches, from one read of /proc. */
function findProcesses(target: { roots: number[]; marked: (value: string) => boolean }): number[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  const parents = new Map<number, number>();
  const found = new Set<number>();
  // A process started before lllm cannot be one a command tool started: its environment is not read.
  const since = ownStart ??= statOf(process.pid)?.start ?? 0;
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    const stat = statOf(pid);
    if (stat === undefined) continue;
    parents.set(pid, stat.parent);
    const siblings = children.get(stat.parent);
    if (siblings) siblings.push(pid);
    else children.set(stat.parent, [pid]);
    if (stat.start < since) continue;
    const mark = markOf(pid);
    if (mark !== undefined && target.marked(mark)) found.add(pid);
  }
  const visited = new Set<number>();
  // A root that is no longer this process's child has exited, and its pid may now be another process's.
  const queue = target.roots.filter((root) => parents.get(root) === process.pid);
  while (queue.length > 0) {
    const pid = queue.shift()!;
    if (visited.has(pid)) continue;
    visited.add(pid);
    found.add(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  found.delete(process.pid);
  return [...found].filter((pid) => pid > 1);
}

/** When this process started, in clock ticks since boot (read once). */
let ownStart: number | undefined;

/** A process's parent and start time (clock ticks since boot), from /proc/<pid>/stat. */
function statOf(pid: number): { parent: number; start: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: the fields after it start past the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const parent = Number(fields[1]);
  const start = Number(fields[19]);
  return Number.isInteger(parent) && Number.isFinite(start) ? { parent, start } : undefined;
}

/** The process's mark, when it has one and its environment is ours to read (another user's is not). */
function markOf(pid: number): string | undefined {
  let environment: string;
  try {
    environment = readFileSync(`/proc/${pid}/environ`, "latin1");
  } catch {
    return undefined;
  }
  const prefix = `${COMMAND_MARK_VARIABLE}=`;
  return environment.split("\0").find((entry) => entry.startsWith(prefix))?.slice(prefix.length);
}
