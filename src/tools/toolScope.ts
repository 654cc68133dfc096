import { AsyncLocalStorage, executionAsyncResource } from "node:async_hooks";

/**
 * Which tool's code is running. Tool code runs inside a scope so that what it writes (`console.log`,
 * `process.stdout.write`) can be told apart from lllm's own output and sent to stderr with the tool's name (the
 * CLI does this: see `cli/reserveStdout.ts`), and so that a run whose event loop drains while a tool has not
 * settled can name that tool.
 */
export interface ToolScope {
  /** The tool's name, or a tool file's name while the file is imported. */
  readonly label: string;
  /** The file the tool was defined in, when known. */
  readonly file?: string | undefined;
  /** A tool's run, or a tool file's import (its top-level code). */
  readonly kind: "run" | "import";
  /** Whether the next character written by this scope starts a line (a prefix goes there). */
  atLineStart: boolean;
}

const storage = new AsyncLocalStorage<ToolScope>();
const running = new Set<ToolScope>();
/** Every scope made, to tell one from whatever else a resource may hold under the storage's key. */
const made = new WeakSet<ToolScope>();

/**
 * Run `body` (a tool's `run`, a tool file's import) inside a scope; async work it starts stays in the scope. The
 * scope is listed as unsettled until the body resolves or rejects: a body that never settles stays listed, which
 * is how a drained event loop can name it.
 */
export function runInToolScope<T>(options: { label: string; file?: string | undefined; kind?: "run" | "import" }, body: () => T | Promise<T>): Promise<T> {
  const scope: ToolScope = { label: options.label, file: options.file, kind: options.kind ?? "run", atLineStart: true };
  made.add(scope);
  running.add(scope);
  // On Node before 24, an enabled AsyncLocalStorage hooks every promise of the process (the model's HTTP requests
  // too: about a quarter of a millisecond per tool round): it is on only while tool code runs. What a tool writes
  // later (from a timer it left) is found by `currentToolScope` all the same.
  const settle = (): void => {
    running.delete(scope);
    if (running.size === 0) storage.disable();
  };
  let result: T | Promise<T>;
  try {
    result = storage.run(scope, body);
  } catch (error) {
    settle();
    return Promise.reject(error as Error);
  }
  // A body that returned a value (most tools) is settled at once, not after a turn of the microtask queue: every
  // promise its callers make as they return (a dozen async frames a tool call: the loop, the journal, the guards)
  // would otherwise be made with the hooks on: on a 100-round run the hooks' own code got hot enough for V8 to
  // optimise it, 2-3% of the run's instructions. What the body queued (a `.then`, `queueMicrotask`, `nextTick`,
  // `setImmediate`) is still marked: each keeps the scope it was made in (test/cli/toolBehaviour.test.ts).
  if (!isThenable(result)) {
    settle();
    return Promise.resolve(result);
  }
  return new Promise<T>((resolve, reject) => {
    result.then(
      (value) => {
        settle();
        resolve(value);
      },
      (error: unknown) => {
        settle();
        reject(error as Error);
      },
    );
  });
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
}

/** The scope of the code running now, if it is tool code. */
export function currentToolScope(): ToolScope | undefined {
  return storage.getStore() ?? keptScope();
}

/**
 * The scope of a callback that tool code set up (a timer, a child process's output) and that runs after the storage
 * was disabled (see `runInToolScope`), on Node before 24: there the storage keeps each scope on the resources made in
 * it, under the symbol `kResourceStore`, and a disabled storage no longer looks there. Without this, what a tool
 * wrote later reached stderr unmarked and unescaped (colours, a forged `lllm:` line), where Node 24 marks it. Node
 * 24's storage (one frame per context) has no such key, and needs none.
 */
function keptScope(): ToolScope | undefined {
  const key = (storage as unknown as { kResourceStore?: unknown }).kResourceStore;
  if (typeof key !== "symbol") return undefined;
  const held = (executionAsyncResource() as Record<symbol, unknown> | undefined)?.[key];
  return typeof held === "object" && held !== null && made.has(held as ToolScope) ? (held as ToolScope) : undefined;
}

/** Tool scopes entered and not yet settled (oldest first). */
export function unsettledToolScopes(): ToolScope[] {
  return [...running];
}

let showCommandStderr = false;

/**
 * Whether a command tool's stderr is copied to this process's stderr as it arrives (it always becomes the error
 * message when the program fails). The CLI turns it on together with the marking of tool output; a library user
 * keeps a quiet stderr unless they ask for it.
 */
export function setShowCommandStderr(show: boolean): void {
  showCommandStderr = show;
}

export function showsCommandStderr(): boolean {
  return showCommandStderr;
}
