import { ConfigError } from "../errors.js";

/**
 * Which isolation runs the Python process: bubblewrap (namespaces), gVisor (`runsc`: a kernel of its own, so the
 * code never reaches the host's kernel directly), none, or `auto`: bubblewrap when it works here, else gVisor.
 */
export type IsolationBackend = "auto" | "bwrap" | "gvisor" | "none";

/** A backend that runs: what `auto` turned into. */
export type ResolvedBackend = "bwrap" | "gvisor" | "none";

/**
 * How model-written code is contained. Limits apply to every backend except `maxProcesses` and `workspaceMb`, which
 * need a sandbox of the code's own (a process limit is counted per user, so on the host it would count the user's
 * other programs too; a size limit needs a filesystem of its own).
 */
export interface IsolationOptions {
  /** Default `auto`: bubblewrap when it is installed and works, else gVisor, else a plain child process with one warning. */
  backend: IsolationBackend;
  /**
   * Memory in MB, default 1024: of each process (RLIMIT_AS, address space) and of the whole sandbox (every process
   * together, measured from the host; under gVisor its own kernel, some 50 MB, counts too). Past it the sandbox is
   * killed and the cell reports why.
   */
  memoryMb?: number;
  /**
   * CPU seconds of each process over its life (RLIMIT_CPU), the kernel included. Default 300. Not per cell: a
   * per-cell limit has to leave the hard limit open for the next cell, and the code could raise it; the per-cell
   * bound is the wall-clock `timeout`. A kernel that reaches it is killed and the next cell starts a new one.
   */
  cpuSeconds?: number;
  /** Processes and threads the sandbox may have at once (RLIMIT_NPROC; `bwrap` and `gvisor` only). Default 64. */
  maxProcesses?: number;
  /**
   * Largest file the code may write, in MB (RLIMIT_FSIZE); also the size of the sandbox's private scratch space, /tmp
   * (under `bwrap` together with /dev/shm, which it links to). Default 100.
   */
  fileSizeMb?: number;
  /**
   * A host folder for the code's files: its working folder, mounted at /workspace under `bwrap` and `gvisor`.
   * Default: a new temporary folder, removed on close (a folder given here is the caller's and is kept).
   */
  workspace?: string;
  /**
   * The size of /workspace in MB (`bwrap` and `gvisor`; ignored with `workspace`). Default 256: /workspace is a
   * private in-memory folder of that size, not a host folder, so the code cannot fill the host's disk, and its files
   * go with the kernel (code-action programs hand files over through the bridge). Only a caller's own `workspace`
   * folder is shared with the host, and its size is then not limited.
   */
  workspaceMb?: number;
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
  /** The size of the private /workspace; absent when /workspace is a host folder. */
  workspaceMb?: number;
}

export const DEFAULT_LIMITS = { memoryMb: 1024, cpuSeconds: 300, maxProcesses: 64, fileSizeMb: 100, workspaceMb: 256 } as const;

/** The limits of `options`, defaults filled in; `maxProcesses` only where the backend enforces it per sandbox. */
export function resolveLimits(options: Partial<IsolationOptions>, backend: ResolvedBackend): SandboxLimits {
  const limits: SandboxLimits = {
    memoryMb: options.memoryMb ?? DEFAULT_LIMITS.memoryMb,
    cpuSeconds: options.cpuSeconds ?? DEFAULT_LIMITS.cpuSeconds,
    fileSizeMb: options.fileSizeMb ?? DEFAULT_LIMITS.fileSizeMb,
  };
  if (backend !== "none") limits.maxProcesses = options.maxProcesses ?? DEFAULT_LIMITS.maxProcesses;
  if (backend !== "none" && options.workspace === undefined) limits.workspaceMb = options.workspaceMb ?? DEFAULT_LIMITS.workspaceMb;
  for (const [key, value] of Object.entries(limits)) {
    // The kernel takes a missing or zero limit for none at all: a NaN from a caller's bad number would lift it.
    const whole = key === "maxProcesses";
    if (!(Number.isFinite(value) && value > 0 && (!whole || Number.isInteger(value)))) {
      throw new ConfigError("sandbox_invalid", `the sandbox's ${key} is ${String(value)}: it must be ${whole ? "a whole number" : "a number"} above 0`);
    }
  }
  return limits;
}
