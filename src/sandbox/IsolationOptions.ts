/** Which isolation runs the Python process: bubblewrap, none, or bubblewrap when it works here. */
export type IsolationBackend = "auto" | "bwrap" | "none";

/**
 * How model-written code is contained. Limits apply to every backend except `maxProcesses`, which needs the private
 * user id that only `bwrap` gives (a process limit is counted per user, so on the host it would count the user's
 * other programs too).
 */
export interface IsolationOptions {
  /** Default `auto`: bubblewrap when it is installed and works, else a plain child process with one warning. */
  backend: IsolationBackend;
  /** Address space of each process, in MB (RLIMIT_AS). Default 1024. */
  memoryMb?: number;
  /**
   * CPU seconds of each process over its life (RLIMIT_CPU), the kernel included. Default 300. Not per cell: a
   * per-cell limit has to leave the hard limit open for the next cell, and the code could raise it; the per-cell
   * bound is the wall-clock `timeout`. A kernel that reaches it is killed and the next cell starts a new one.
   */
  cpuSeconds?: number;
  /** Processes and threads the sandbox may have at once (RLIMIT_NPROC; `bwrap` only). Default 64. */
  maxProcesses?: number;
  /** Largest file the code may write, in MB (RLIMIT_FSIZE); also the size of the sandbox's private /tmp. Default 100. */
  fileSizeMb?: number;
  /**
   * A host folder for the code's files: its working folder, mounted at /workspace under `bwrap`. Default: a new
   * temporary folder, removed on close (a folder given here is the caller's and is kept).
   */
  workspace?: string;
  /** The code never gets a network under `bwrap`; the key exists to say so in configurations. */
  network?: false;
}

/** The limits a kernel applies to itself, after defaults. */
export interface SandboxLimits {
  memoryMb: number;
  cpuSeconds: number;
  /** Absent when the backend cannot enforce it. */
  maxProcesses?: number;
  fileSizeMb: number;
}

export const DEFAULT_LIMITS = { memoryMb: 1024, cpuSeconds: 300, maxProcesses: 64, fileSizeMb: 100 } as const;

/** The limits of `options`, defaults filled in; `maxProcesses` only where the backend enforces it per sandbox. */
export function resolveLimits(options: Partial<IsolationOptions>, backend: "bwrap" | "none"): SandboxLimits {
  const limits: SandboxLimits = {
    memoryMb: options.memoryMb ?? DEFAULT_LIMITS.memoryMb,
    cpuSeconds: options.cpuSeconds ?? DEFAULT_LIMITS.cpuSeconds,
    fileSizeMb: options.fileSizeMb ?? DEFAULT_LIMITS.fileSizeMb,
  };
  if (backend === "bwrap") limits.maxProcesses = options.maxProcesses ?? DEFAULT_LIMITS.maxProcesses;
  return limits;
}
