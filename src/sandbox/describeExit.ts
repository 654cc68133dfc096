import { constants } from "node:os";
import type { ResolvedBackend, SandboxLimits } from "./IsolationOptions.js";

/** How a kernel process ended, as Node reports it. */
export interface KernelExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why the host killed it (a limit the whole sandbox hit), when it did. */
  reason?: string;
}

/**
 * A sentence for the model about a kernel that died during a cell, naming the limit it probably hit. bwrap reports
 * a sandboxed process killed by a signal as exit code 128 + the signal's number, and so does runsc.
 */
export function describeExit(exit: KernelExit, backend: ResolvedBackend, limits: SandboxLimits): string {
  if (exit.reason !== undefined) return `the kernel was killed: ${exit.reason}`;
  const signal = exit.signal ?? (backend !== "none" && exit.code !== null && exit.code > 128 ? signalName(exit.code - 128) : undefined);
  if (signal === undefined) {
    return `the kernel exited with code ${exit.code ?? "unknown"} (the code ended the Python process, e.g. with os._exit)`;
  }
  return `the kernel died (signal ${signal}): ${SIGNAL_CAUSES[signal]?.(limits) ?? "killed from outside"}`;
}

const SIGNAL_CAUSES: Partial<Record<string, (limits: SandboxLimits) => string>> = {
  SIGKILL: (limits) => `memory limit? (${limits.memoryMb} MB per process; or the CPU limit of ${limits.cpuSeconds} s per process)`,
  SIGXCPU: (limits) => `it used up its CPU time limit of ${limits.cpuSeconds} s`,
  SIGXFSZ: (limits) => `it wrote a file past the limit of ${limits.fileSizeMb} MB`,
  SIGSEGV: () => "a crash in native code",
  SIGBUS: () => "a crash in native code",
  SIGABRT: () => "native code aborted",
  SIGTERM: () => "it was terminated",
};

function signalName(number: number): string {
  const entry = Object.entries(constants.signals).find(([, value]) => value === number);
  return entry ? entry[0] : `number ${number}`;
}
