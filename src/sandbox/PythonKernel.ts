import { SandboxError } from "../errors.js";
import type { HostFunction } from "./answerCall.js";
import { describeExit, type KernelExit } from "./describeExit.js";
import type { IsolationOptions, ResolvedBackend } from "./IsolationOptions.js";
import { KernelProcess, MAX_MESSAGE_BYTES, type ResultMessage } from "./KernelProcess.js";
import { trackKernel, untrackKernel } from "./liveKernels.js";
import { prepareLaunch, type KernelLaunch } from "./prepareLaunch.js";
import type { Sandbox } from "./Sandbox.js";

/** Options of `PythonKernel.start`. */
export interface PythonKernelOptions {
  /**
   * The bridge: functions Python may call by name, with `lllm_bridge.call(name, args)`. They run in the host,
   * concurrently with the kernel, which waits for the answer. Throw a `BridgeError` to choose the Python exception.
   */
  hostFunctions?: Record<string, HostFunction>;
  /**
   * Python run at start and after every `reset()`, in the cells' namespace; what it defines stays (such as
   * `CALL_API`). Its frames are left out of tracebacks. An error in it fails `start()` and `reset()`.
   */
  prelude?: string;
  /** Printed output longer than this is cut and `truncationIndicator` appended. Default 5000; 0 = no limit. */
  maxOutputChars?: number;
  /** Default `"... (truncated)"`. */
  truncationIndicator?: string;
  /**
   * Seconds a cell may run (default 60; 0 = no limit). Then it is interrupted with TimeoutError and the namespace
   * survives; a cell that ignores the interrupt is killed with the kernel after a grace period.
   */
  timeout?: number;
  /** Default `{ backend: "auto" }`: see IsolationOptions. */
  isolation?: Partial<IsolationOptions>;
  /** The Python command; default `python3` on PATH. */
  python?: string;
  /** Output of the kernel outside any cell (and bwrap's own messages). Default: dropped. */
  onStderr?: (text: string) => void;
  /** Called once per process when `auto` finds no isolation and runs code in a plain child process. */
  onWarning?: (message: string) => void;
}

/** What one cell did, for callers that need more than the text (code-action). */
export interface CellResult {
  /** What the cell printed (cut at maxOutputChars), then its traceback or the kernel's message: what `run()` returns. */
  output: string;
  /** Why the cell did not finish normally: the exception's class and message, `TimeoutError`, or `KernelDied`. */
  error?: { type: string; message: string };
  /** The kernel died or was killed during this cell: every variable is gone, and the next cell starts a new kernel. */
  stateLost: boolean;
  /** This cell ran in a new kernel because the previous one was lost. */
  restarted: boolean;
  /**
   * With no `maxOutputChars`, the output was still cut because it was larger than one message to the host can
   * carry (64 MB): `output` ends with a note saying so, and is incomplete.
   */
  outputCut?: boolean;
}

/** After a cell ignored its TimeoutError this long, the host kills the kernel. */
const GRACE_SECONDS = 2;
const START_TIMEOUT_MS = 30_000;
const LOST = "The kernel was restarted; all variables were lost.";
const LOST_NOTE = "(the kernel was restarted; all variables from earlier cells were lost)\n";

/**
 * A persistent Python process whose namespace survives across cells, like the seed's AgentInterpreter (Step 13),
 * but in a child process under the strongest isolation available. Cells run one at a time, in call order.
 */
export class PythonKernel implements Sandbox {
  private process: KernelProcess | undefined;
  /** Variables were lost without a cell saying so: the next cell's output starts with a note. */
  private lostUnreported = false;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 1;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly launch: KernelLaunch,
    private readonly options: PythonKernelOptions,
  ) {}

  /** Start a kernel and run its prelude. Throws SandboxError when it cannot start (no Python, no bwrap when asked). */
  static async start(options: PythonKernelOptions = {}): Promise<PythonKernel> {
    const launch = await prepareLaunch({
      isolation: options.isolation ?? {},
      ...(options.python !== undefined ? { python: options.python } : {}),
      ...(options.onWarning !== undefined ? { onWarning: options.onWarning } : {}),
    });
    const kernel = new PythonKernel(launch, options);
    trackKernel(kernel);
    try {
      kernel.process = await kernel.spawn();
    } catch (error) {
      kernel.closeNow();
      throw error;
    }
    return kernel;
  }

  /** The isolation the kernel runs under. */
  get backend(): ResolvedBackend {
    return this.launch.backend;
  }

  /**
   * The host folder the code works in (mounted at /workspace under bwrap and gVisor); it outlives restarts. With
   * `isolation.workspaceMb` the code's /workspace is private to the sandbox, and this folder stays empty.
   */
  get workspace(): string {
    return this.launch.workspace;
  }

  /** The host pid of the kernel's process (bwrap's under bwrap), while one runs. */
  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** Run a cell; resolve with what it printed, or its traceback. Never rejects for the code's own failures. */
  async run(code: string): Promise<string> {
    return (await this.execute(code)).output;
  }

  /**
   * Run a cell and report how it ended. `timeout` (seconds) overrides the kernel's for this cell. When `signal`
   * aborts, the kernel's process group is killed at once (the cell may ignore interrupts, or have no time limit),
   * the variables are lost, and the promise rejects with the signal's reason.
   */
  execute(code: string, options: { timeout?: number; signal?: AbortSignal | undefined } = {}): Promise<CellResult> {
    return this.enqueue(() => this.executeNow(code, options.timeout ?? this.options.timeout ?? 60, options.signal));
  }

  /** Clear the namespace and run the prelude again; the workspace's files stay. */
  reset(): Promise<void> {
    return this.enqueue(async () => {
      const current = this.process;
      if (current === undefined) {
        this.lostUnreported = false; // the next cell starts a new kernel, which is as fresh as a reset
        return;
      }
      const outcome = await this.request(current, { type: "reset", id: this.nextId++ }, this.options.timeout ?? 60);
      if (outcome.kind === "result" && outcome.result.error !== null) {
        throw new SandboxError("sandbox_prelude_failed", `the kernel's prelude failed on reset:\n${outcome.result.output}`);
      }
      if (outcome.kind !== "result") {
        this.dropProcess();
        this.lostUnreported = false; // a reset loses the variables anyway
      }
    });
  }

  /** Kill the kernel and everything it started, and remove its temporary workspace. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const current = this.process;
      this.process = undefined;
      if (current !== undefined) {
        current.kill();
        // unref: a kernel that exited at once must not keep the host alive for the rest of the wait.
        await Promise.race([current.exited, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      }
      this.launch.dispose();
      untrackKernel(this);
    })();
    return this.closing;
  }

  /** Synchronous close for the host's `exit` handler. */
  closeNow(): void {
    this.closing ??= Promise.resolve();
    this.process?.kill();
    this.process = undefined;
    this.launch.dispose();
    untrackKernel(this);
  }

  private async executeNow(code: string, timeout: number, signal: AbortSignal | undefined): Promise<CellResult> {
    signal?.throwIfAborted();
    let restarted = false;
    let note = "";
    if (this.process === undefined) {
      this.process = await this.spawn();
      restarted = true;
      if (this.lostUnreported) note = LOST_NOTE;
      this.lostUnreported = false;
    }
    const outcome = await this.request(this.process, { type: "run", id: this.nextId++, code, timeout }, timeout, signal);
    if (outcome.kind === "aborted") {
      this.dropProcess();
      this.lostUnreported = true; // the next cell starts a new kernel and says so
      throw signal?.reason ?? new SandboxError("sandbox_aborted", "the cell was aborted");
    }
    if (outcome.kind === "result") {
      const { output, error, outputCut } = outcome.result;
      return { output: note + output, ...(error ? { error } : {}), stateLost: false, restarted, ...(outputCut ? { outputCut } : {}) };
    }
    this.dropProcess();
    this.lostUnreported = false; // this cell's output says it
    if (outcome.kind === "deadline") {
      const message = `cell exceeded the time limit of ${timeout} s and did not stop when interrupted`;
      return { output: `${note}TimeoutError: ${message}.\n${LOST}`, error: { type: "TimeoutError", message }, stateLost: true, restarted };
    }
    const message = describeExit(outcome.exit, this.launch.backend, this.launch.limits);
    return { output: `${note}${message}\n${LOST}`, error: { type: "KernelDied", message }, stateLost: true, restarted };
  }

  /** Send a request and wait for its result, the process's death, or the backstop deadline (which kills it). */
  private async request(
    kernelProcess: KernelProcess,
    message: { type: "run"; id: number; code: string; timeout: number } | { type: "reset"; id: number },
    timeout: number,
    signal?: AbortSignal,
  ): Promise<{ kind: "result"; result: ResultMessage } | { kind: "exit"; exit: KernelExit } | { kind: "deadline" } | { kind: "aborted" }> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<{ kind: "deadline" }>((resolve) => {
      if (timeout > 0) timer = setTimeout(() => resolve({ kind: "deadline" }), (timeout + GRACE_SECONDS) * 1000);
    });
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<{ kind: "aborted" }>((resolve) => {
      onAbort = () => resolve({ kind: "aborted" });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    const outcome = await Promise.race([
      kernelProcess.request(message).then((result) => ({ kind: "result" as const, result })),
      kernelProcess.exited.then((exit) => ({ kind: "exit" as const, exit })),
      deadline,
      aborted,
    ]);
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort!);
    if (outcome.kind === "deadline" || outcome.kind === "aborted") {
      kernelProcess.kill();
      await kernelProcess.exited;
    }
    if (outcome.kind !== "result" && this.closing !== undefined) {
      throw new SandboxError("sandbox_closed", "the kernel was closed while a cell was running");
    }
    return outcome;
  }

  private async spawn(): Promise<KernelProcess> {
    if (this.closing !== undefined) throw new SandboxError("sandbox_closed", "the kernel is closed; start a new one");
    const started = await KernelProcess.start(
      this.launch,
      {
        type: "init",
        prelude: this.options.prelude ?? "",
        limits: this.launch.limits,
        maxOutputChars: this.options.maxOutputChars ?? 5000,
        truncationIndicator: this.options.truncationIndicator ?? "... (truncated)",
        maxMessageBytes: MAX_MESSAGE_BYTES,
        ...(this.launch.backend !== "none" ? { cwd: "/workspace" } : {}),
        ...(this.launch.seccomp !== undefined ? { seccomp: this.launch.seccomp } : {}),
      },
      { hostFunctions: this.options.hostFunctions ?? {}, onStderr: this.options.onStderr, startTimeoutMs: START_TIMEOUT_MS },
    );
    if (this.closing !== undefined) {
      started.kill(); // close() came while it started, and found nothing to kill
      throw new SandboxError("sandbox_closed", "the kernel was closed while it started");
    }
    // A kernel that dies between cells (a thread's os._exit, a limit) is noticed here; the next cell says so.
    void started.exited.then(() => {
      if (this.process !== started) return;
      this.dropProcess();
      if (this.closing === undefined) this.lostUnreported = true;
    });
    return started;
  }

  /** Forget the current process (killing whatever is left of it); the next cell starts a new one. */
  private dropProcess(): void {
    this.process?.kill();
    this.process = undefined;
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const result = this.queue.then(task, task);
    this.queue = result.catch(() => {});
    return result;
  }
}
