import { constants } from "node:os";
import { InterruptedError } from "../errors.js";
import { terminateTrackedChildren } from "../mcp/childProcesses.js";
import { closeAllKernels } from "../sandbox/liveKernels.js";
import { killAllCommandProcesses } from "../tools/commandProcesses.js";
import { writeErr } from "./output.js";

/** The signals that stop the CLI. SIGHUP too: a closed terminal must not leave servers and kernels behind. */
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
type StopSignal = (typeof SIGNALS)[number];

/**
 * How long the run may take, after a signal, to stop and clean up on its own (close kernels, stop MCP servers,
 * remove temporary folders) before the CLI exits anyway. The `exit` hooks of the kernel and server trackers then
 * kill what is left synchronously, so nothing outlives lllm either way.
 */
const STOP_GRACE_MS = 2000;

/** What the CLI's one signal handler has seen. */
export interface SignalHandling {
  /** Aborted on the first signal, with an `InterruptedError` as its reason. */
  readonly signal: AbortSignal;
  /** The signal received, if any. */
  readonly received: StopSignal | undefined;
  /** 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), or undefined when no signal came. */
  readonly exitCode: number | undefined;
  /** Remove the handlers (once the command has finished). */
  dispose(): void;
}

let current: SignalHandling | undefined;
/** A command's own use of the first signal (see `holdFirstSignal`), and the signals it takes so. */
let heldFirst: ((signal: StopSignal) => void) | undefined;
let heldSignals: readonly StopSignal[] = ["SIGINT"];
let held = false;
/** A command that takes every Ctrl-C itself while it runs (see `takeInterrupts`). */
let interrupts: (() => void) | undefined;
/** A command that stops gracefully on the first signal of any kind (see `takeFirstStop`). */
let firstStop: ((signal: StopSignal) => void) | undefined;

/**
 * Let the running command take the first SIGINT, SIGTERM or SIGHUP itself as a request to stop gracefully (`lllm
 * serve`: stop accepting, let the runs in flight finish, exit 0). Nothing is aborted and no exit code is set; the
 * second signal does what a first one would have done (abort, exit after the grace), and a third exits at once.
 */
export function takeFirstStop(onStop: (signal: StopSignal) => void): void {
  firstStop = onStop;
}

/**
 * Let the running command take every SIGINT itself for as long as it holds them (`lllm chat`: Ctrl-C cancels the
 * answer being written and the session goes on). SIGTERM and SIGHUP still stop the CLI as usual. Returns the release.
 */
export function takeInterrupts(onInterrupt: () => void): () => void {
  interrupts = onInterrupt;
  return () => {
    if (interrupts === onInterrupt) interrupts = undefined;
  };
}

/**
 * Let the running command take the first Ctrl-C itself (`lllm batch`: stop starting items, let the running ones
 * finish): it only sets the exit code and calls `onFirst`. The second signal then does what the first would have
 * done (abort, close kernels, exit after the grace), and a third exits at once. `signals`: the first of which kinds
 * (`lllm worker` takes SIGTERM so too: a supervisor's stop, as in a rolling deploy, lets its runs finish).
 */
export function holdFirstSignal(onFirst: (signal: StopSignal) => void, signals: readonly StopSignal[] = ["SIGINT"]): void {
  heldFirst = onFirst;
  heldSignals = signals;
}

/** The handler's own way in (see `stopAfterHold`). */
let secondStop: ((signal: StopSignal, why: string) => void) | undefined;

/**
 * Do now what a second `signal` would do after a held first one (see `holdFirstSignal`): abort the command, stop
 * its processes, exit after the grace. `why` is said instead of the line about a signal received (`lllm worker`'s
 * drain timeout: no second signal came).
 */
export function stopAfterHold(signal: StopSignal, why: string): void {
  secondStop?.(signal, why);
}

/**
 * The one place where the CLI turns SIGINT, SIGTERM and SIGHUP into an abort. The first signal aborts
 * `signal` (commands pass it down to the run), kills every command tool's processes, closes every kernel and stops
 * every MCP server's process group (SIGTERM, then SIGKILL), and exits with 128 + the signal's number after a short
 * grace if the command has not finished by then. A second signal exits at once (the `exit` hooks still kill every
 * process group).
 */
export function handleSignals(): SignalHandling {
  const controller = new AbortController();
  let received: StopSignal | undefined;
  // Node calls a signal's listeners with its name and number: the number is not a `why`.
  const onSignal = (signal: StopSignal): void => stop(signal);
  const stop = (signal: StopSignal, why?: string): void => {
    if (signal === "SIGINT" && interrupts && received === undefined) {
      interrupts();
      return;
    }
    if (received === undefined && firstStop && !held) {
      const onStop = firstStop;
      firstStop = undefined;
      held = true;
      onStop(signal);
      return;
    }
    const code = 128 + constants.signals[signal];
    if (received === undefined && heldFirst && heldSignals.includes(signal)) {
      received = signal;
      held = true;
      process.exitCode = code;
      const onFirst = heldFirst;
      heldFirst = undefined;
      onFirst(signal);
      return;
    }
    if (held) held = false; // the second signal, after a held first one: stop as a first signal would
    else if (received !== undefined) {
      process.exit(code); // a second signal: the user really wants out
    }
    received = signal;
    process.exitCode = code;
    writeErr(why ?? (signal === "SIGINT" ? "lllm: interrupted; stopping (Ctrl-C again to quit at once)" : `lllm: received ${signal}; stopping`));
    controller.abort(new InterruptedError("interrupted", signal === "SIGINT" ? "interrupted by the user" : `stopped by ${signal}`, { exitCode: code }));
    // Command tools' programs are killed now, with whatever they started (a `setsid` grandchild included): a run
    // hands them the abort, but `batch`, `test` and `mcp serve` may have calls the signal does not reach.
    killAllCommandProcesses();
    void Promise.allSettled([closeAllKernels(), terminateTrackedChildren()]);
    // unref: when the command finishes in time the process exits on its own; this only ends a run that does not.
    setTimeout(() => process.exit(code), STOP_GRACE_MS).unref();
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  // Only while a first signal is held: after a second one, it would exit at once, cutting the clean-up short.
  secondStop = (signal, why) => {
    if (held) stop(signal, why);
  };
  const handling: SignalHandling = {
    signal: controller.signal,
    get received() {
      return received;
    },
    get exitCode() {
      return received === undefined ? undefined : 128 + constants.signals[received];
    },
    dispose() {
      for (const signal of SIGNALS) process.off(signal, onSignal);
      if (current === handling) {
        current = undefined;
        secondStop = undefined;
      }
    },
  };
  current = handling;
  return handling;
}

/** The abort signal of the CLI's signal handler, for commands; a signal that never aborts outside `main`. */
export function stopSignal(): AbortSignal {
  return current?.signal ?? new AbortController().signal;
}
