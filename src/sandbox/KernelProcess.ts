import type { ChildProcess } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { SandboxError } from "../errors.js";
import { answerCall, type HostFunction } from "./answerCall.js";
import type { KernelExit } from "./describeExit.js";
import { DEFAULT_LIMITS, type SandboxLimits } from "./IsolationOptions.js";
import { JsonLineChannel } from "./JsonLineChannel.js";
import type { HostMessage, KernelMessage } from "./KernelMessage.js";
import type { KernelLaunch } from "./prepareLaunch.js";
import { MemoryWatchdog, sandboxMemoryMessage } from "./MemoryWatchdog.js";
import { spawnKernel } from "./spawnKernel.js";

type InitMessage = Extract<HostMessage, { type: "init" }>;
type RequestMessage = Extract<HostMessage, { type: "run" | "reset" }>;
/** A kernel's answer to a run or reset. */
export type ResultMessage = Extract<KernelMessage, { type: "result" }>;

export interface KernelProcessOptions {
  hostFunctions: Readonly<Record<string, HostFunction>>;
  onStderr?: ((text: string) => void) | undefined;
  /** How long the kernel may take to start and run its prelude. */
  startTimeoutMs: number;
}

/** The largest message either side accepts (kernel.py refuses to send larger ones): big values fit, a runaway does not. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const START_HINTS = {
  bwrap: "Check that bubblewrap works here (`bwrap --ro-bind / / true`), or use isolation backend \"none\" for trusted code.",
  gvisor: "Check that gVisor works here (`runsc --network=none do true`), or use isolation backend \"bwrap\".",
  none: "Check that Python 3 runs here.",
} as const;
/** Enough of the kernel's stderr to explain a failed start. */
const STDERR_TAIL = 4000;
/** How long a failed start waits for the rest of the kernel's stderr. */
const STDERR_GRACE_MS = 2000;

/**
 * One running kernel.py process and its end of the bridge: it routes results to the requests waiting for them and
 * runs host functions for the kernel's calls, concurrently with whatever the kernel does meanwhile.
 */
export class KernelProcess {
  /** Settles when the process has exited, however it ended. */
  readonly exited: Promise<KernelExit>;
  private readonly waiting = new Map<number, (message: ResultMessage) => void>();
  private readonly channel: JsonLineChannel<KernelMessage, HostMessage>;
  private onReady: ((message: Extract<KernelMessage, { type: "ready" }>) => void) | undefined;
  private stderrTail = "";
  /** Settles when the kernel's stderr has ended: its last words arrive after the exit event. */
  private readonly stderrEnded: Promise<void>;
  private hasExited = false;
  /** Why the process could not be started at all (a missing program). */
  private spawnError: Error | undefined;
  /** Sums the sandbox's memory and knows every process it started (see MemoryWatchdog). */
  private watchdog: MemoryWatchdog | undefined;
  /** Why the host killed the sandbox, when it did so for a limit: what the model is told. */
  private killReason: string | undefined;

  private constructor(
    private readonly child: ChildProcess,
    private readonly options: KernelProcessOptions,
    channel: KernelLaunch["channel"],
  ) {
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal, ...(this.killReason !== undefined ? { reason: this.killReason } : {}) }));
      child.once("error", (error) => {
        this.spawnError = error; // could not be started at all
        resolve({ code: null, signal: null });
      });
    });
    void this.exited.then(() => {
      this.hasExited = true;
    });
    // Under gVisor the bridge is the process's stdin and stdout (moved to fds 3 and 4 inside); its output is stderr.
    const [stdin, stdout, stderr, fd3, fd4] = child.stdio as [Writable | null, Readable, Readable, Writable, Readable];
    const [toKernel, fromKernel] = channel === "stdio" ? [stdin!, stdout] : [fd3, fd4];
    const streams = channel === "stdio" ? [stderr] : [stdout, stderr];
    for (const stream of streams) {
      stream.setEncoding("utf8");
      stream.on("data", (text: string) => {
        this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL);
        options.onStderr?.(text);
      });
    }
    this.stderrEnded = Promise.all(streams.map((stream) => new Promise<void>((resolve) => stream.once("close", resolve)))).then(() => undefined);
    this.channel = new JsonLineChannel<KernelMessage, HostMessage>(
      fromKernel,
      toKernel,
      (message) => this.receive(message),
      (line) => options.onStderr?.(`lllm kernel: ignored a message that is not JSON: ${line.slice(0, 200)}\n`),
      MAX_MESSAGE_BYTES,
    );
  }

  /** Start a kernel, send it `init`, and wait until it has run its prelude. */
  static async start(launch: KernelLaunch, init: InitMessage, options: KernelProcessOptions): Promise<KernelProcess> {
    launch.beforeStart?.();
    const child = spawnKernel(launch);
    const kernel = new KernelProcess(child, options, launch.channel);
    kernel.watch(launch);
    const ready = new Promise<Extract<KernelMessage, { type: "ready" }>>((resolve) => {
      kernel.onReady = resolve;
    });
    kernel.channel.send(init);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), options.startTimeoutMs);
    });
    const first = await Promise.race([ready, kernel.exited.then((exit) => ({ exit })), timedOut]);
    clearTimeout(timer);
    if (first !== "timeout" && "type" in first && first.error === undefined) return kernel;
    kernel.kill();
    await kernel.exited;
    // A process the kernel started outside its group may hold stderr open: wait for its end a moment, not for good.
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([kernel.stderrEnded, new Promise((resolve) => (waited = setTimeout(resolve, STDERR_GRACE_MS)))]);
    clearTimeout(waited);
    throw kernel.startFailure(launch, first);
  }

  /** The host pid of the process (bwrap's, under bwrap). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Send a run or reset; resolves with the kernel's result (never, if it dies first: race it with `exited`). */
  request(message: RequestMessage): Promise<ResultMessage> {
    return new Promise((resolve) => {
      this.waiting.set(message.id, resolve);
      this.channel.send(message);
    });
  }

  /** Kill the process group at once, and every process the code started outside it; safe to call on a dead process. */
  kill(): void {
    this.watchdog?.stop();
    this.watchdog?.tree.killAll();
    const pid = this.child.pid;
    try {
      if (pid !== undefined) process.kill(-pid, "SIGKILL");
    } catch {
      this.child.kill("SIGKILL"); // the group is gone already; make sure the child is too
    }
    this.channel.close();
  }

  /** Hold the whole sandbox to its memory limit, whatever number of processes it runs. */
  private watch(launch: KernelLaunch): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    const limitMb = launch.limits.memoryMb;
    this.watchdog = new MemoryWatchdog({
      root: pid,
      limitMb,
      onExceeded: (usedMb) => {
        this.killReason = sandboxMemoryMessage(limitMb, usedMb);
        this.kill();
      },
    });
    void this.exited.then(() => this.watchdog?.stop());
  }

  private receive(message: KernelMessage): void {
    switch (message.type) {
      case "ready":
        this.onReady?.(message);
        break;
      case "result": {
        const resolve = this.waiting.get(message.id);
        this.waiting.delete(message.id);
        resolve?.(message);
        break;
      }
      case "call":
        void answerCall(this.options.hostFunctions, message.id, message.name, message.args).then((reply) => this.reply(reply));
        break;
    }
  }

  private reply(reply: HostMessage): void {
    if (this.hasExited) return;
    try {
      this.channel.send(reply);
    } catch (error) {
      // A value JSON cannot carry (a BigInt, a cycle): the program gets an error instead of a broken pipe.
      const id = (reply as { id: number }).id;
      this.channel.send({ type: "reply", id, ok: false, error: { type: "TypeError", message: `the host function's result is not JSON: ${(error as Error).message}` } });
    }
  }

  private startFailure(launch: KernelLaunch, first: { exit: KernelExit } | Extract<KernelMessage, { type: "ready" }> | "timeout"): SandboxError {
    const what = launch.backend === "none" ? "the Python kernel" : `the Python kernel (in ${launch.backend === "bwrap" ? "bubblewrap" : "gVisor"})`;
    const stderr = this.stderrTail.trim();
    if (first === "timeout") return new SandboxError("sandbox_start_failed", `${what} did not start within ${this.options.startTimeoutMs / 1000} s${stderr ? `:\n${stderr}` : ""}`);
    if ("type" in first) return new SandboxError("sandbox_prelude_failed", `the kernel's prelude failed:\n${first.error ?? ""}`);
    if (this.spawnError) return new SandboxError("sandbox_start_failed", `cannot start ${what}: ${this.spawnError.message}`, { cause: this.spawnError });
    const how = first.exit.signal ? `was killed by ${first.exit.signal}` : `exited with code ${first.exit.code ?? "unknown"}`;
    const lowered = loweredLimits(launch.limits);
    return new SandboxError("sandbox_start_failed", `${what} ${how} before it was ready${stderr ? `:\n${stderr}` : ""}`, {
      hint: lowered ? `The sandbox's limits may be too low for Python to start (${lowered}): raise them in the tactic's \`sandbox:\`.` : START_HINTS[launch.backend],
    });
  }
}

/** The memory and process limits set below their defaults, in the tactic's words; undefined when none is. */
function loweredLimits(limits: SandboxLimits): string | undefined {
  const lowered = [
    ...(limits.memoryMb < DEFAULT_LIMITS.memoryMb ? [`memory_limit ${limits.memoryMb} MB, default ${DEFAULT_LIMITS.memoryMb}`] : []),
    ...(limits.maxProcesses !== undefined && limits.maxProcesses < DEFAULT_LIMITS.maxProcesses ? [`max_processes ${limits.maxProcesses}, default ${DEFAULT_LIMITS.maxProcesses}`] : []),
  ];
  return lowered.length > 0 ? lowered.join("; ") : undefined;
}
