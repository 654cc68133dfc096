import { readdirSync, readFileSync } from "node:fs";

/** One process seen under the root: its start time tells it apart from a later process given the same pid. */
interface Seen {
  pid: number;
  startTime: string;
}

/**
 * The processes descended from one root pid, read from /proc (Linux): for the memory a sandbox uses as a whole,
 * and for killing what the code started, including processes that left its process group with setsid. Processes
 * are remembered once seen, so one orphaned later (re-parented away from the tree) is still killed at the end.
 */
export class ProcessTree {
  readonly #root: number;
  readonly #known = new Map<number, Seen>();
  /**
   * Every process of the machine as last read: a pid listed in two scans in a row is taken to be the same process,
   * so each scan reads only the new ones (a walk of all of /proc every poll would cost milliseconds).
   */
  #all = new Map<number, { ppid: number; startTime: string }>();

  constructor(root: number) {
    this.#root = root;
  }

  /** The live processes of the tree now (the root included), remembering each. */
  scan(): number[] {
    const parents = new Map<number, number[]>();
    const starts = new Map<number, string>();
    let names: string[];
    try {
      names = readdirSync("/proc");
    } catch {
      return [];
    }
    const all = new Map<number, { ppid: number; startTime: string }>();
    for (const name of names) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || pid <= 0) continue;
      // A process of the tree is read again: its parent changes when it is orphaned.
      const stat = (this.#known.has(pid) ? undefined : this.#all.get(pid)) ?? readStat(pid);
      if (stat === undefined) continue;
      all.set(pid, stat);
      starts.set(pid, stat.startTime);
      const siblings = parents.get(stat.ppid);
      if (siblings) siblings.push(pid);
      else parents.set(stat.ppid, [pid]);
    }
    this.#all = all;
    if (!starts.has(this.#root)) return this.#stillKnown(starts);
    const found: number[] = [];
    const queue = [this.#root];
    while (queue.length > 0) {
      const pid = queue.shift()!;
      found.push(pid);
      this.#known.set(pid, { pid, startTime: starts.get(pid)! });
      queue.push(...(parents.get(pid) ?? []));
    }
    // Known processes that were re-parented away (an orphan, a daemon) still belong to the sandbox.
    for (const seen of this.#stillKnown(starts)) if (!found.includes(seen)) found.push(seen);
    return found;
  }

  /** SIGKILL every process of the tree, those seen before included; never a pid that now names another process. */
  killAll(): void {
    const live = this.scan();
    for (const pid of live) {
      if (pid === process.pid) continue;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
  }

  #stillKnown(starts: Map<number, string>): number[] {
    const live: number[] = [];
    for (const seen of this.#known.values()) {
      if (starts.get(seen.pid) === seen.startTime) live.push(seen.pid);
      else this.#known.delete(seen.pid);
    }
    return live;
  }
}

/** Memory a process uses, in bytes: its proportional share (shared pages split between their users), else RSS. */
export function processMemory(pid: number): number {
  try {
    const pss = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1];
    if (pss !== undefined) return Number(pss) * 1024;
  } catch {
    // no smaps_rollup (Linux < 4.14), or the process is gone
  }
  try {
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return rss === undefined ? 0 : Number(rss) * 1024;
  } catch {
    return 0;
  }
}

function readStat(pid: number): { ppid: number; startTime: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: the fields after it start past the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const ppid = Number(fields[1]);
  const startTime = fields[19];
  return Number.isInteger(ppid) && startTime !== undefined ? { ppid, startTime } : undefined;
}
