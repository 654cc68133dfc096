import { processMemory, ProcessTree } from "./ProcessTree.js";

export interface MemoryWatchdogOptions {
  /** The host pid the sandbox hangs from (bwrap's, runsc's, or the kernel's own under `none`). */
  root: number;
  /** The most the whole sandbox may use, in MB. */
  limitMb: number;
  /** Called once, with the MB in use, when the sandbox is past the limit; the caller kills it. */
  onExceeded: (usedMb: number) => void;
  /** Between two measurements. Default 200 ms: a poll costs a walk of /proc, a few milliseconds. */
  intervalMs?: number;
}

/**
 * The memory limit of a whole sandbox. RLIMIT_AS bounds each process alone, so a program forking eight children
 * could use eight times the limit; this sums the memory of every process under the sandbox's root on the host (for
 * gVisor, the runsc processes, whose memory holds the sandbox's) and reports when the total passes the limit. A
 * cgroup would be exact, but lllm may only use one delegated to it, which it cannot count on; the poll can miss a
 * burst shorter than its interval, which RLIMIT_AS still bounds per process.
 */
export class MemoryWatchdog {
  readonly tree: ProcessTree;
  readonly #timer: NodeJS.Timeout;
  #fired = false;

  constructor(options: MemoryWatchdogOptions) {
    this.tree = new ProcessTree(options.root);
    const limit = options.limitMb * 1024 * 1024;
    this.#timer = setInterval(() => {
      if (this.#fired) return;
      let used = 0;
      for (const pid of this.tree.scan()) used += processMemory(pid);
      if (used <= limit) return;
      this.#fired = true;
      this.stop();
      options.onExceeded(Math.round(used / 1024 / 1024));
    }, options.intervalMs ?? 200);
    this.#timer.unref(); // never keeps the host alive
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/** What the model is told when the watchdog stopped its sandbox. */
export function sandboxMemoryMessage(limitMb: number, usedMb: number): string {
  return `the sandbox used ${usedMb} MB of memory across all its processes, past its limit of ${limitMb} MB, and was stopped. Use less memory at once (fewer processes, smaller pieces of data); the limit is set by \`sandbox: {memory_limit: ...}\` in the tactic.`;
}
