import { main } from "../../src/cli/main.js";
import { markLines } from "../../src/cli/reserveStdout.js";
import { currentToolScope } from "../../src/tools/toolScope.js";
import { isOwnStdoutWrite } from "../../src/util/ownStdout.js";
import { ROOT } from "./paths.js";
import { cleanEnv, type CliResult } from "./runCli.js";

export interface InProcessOptions {
  cwd?: string;
  /** Added to the clean environment (`cleanEnv`), as `runCli` does. */
  env?: NodeJS.ProcessEnv;
}

type Write = (chunk: string | Uint8Array, encoding?: unknown, callback?: unknown) => boolean;

/**
 * Run the CLI's `main(argv)` in this process, as `runCli` runs the built binary, and return what it printed and
 * its exit code. About 100 times faster than a spawn (no Node start, no imports), so the error-message cases run
 * this way; every command keeps some real end-to-end spawns (`runCli`).
 *
 * While it runs, the environment is the clean one a spawned CLI gets, the working folder is `cwd`, no stream is a
 * terminal, and stdout/stderr are captured; all of it is restored afterwards. No standard input: a command that
 * reads it (`run` without `-i`) needs `runCli`. Calls must not overlap (one at a time per test file).
 */
export async function runCliInProcess(args: string[], options: InProcessOptions = {}): Promise<CliResult> {
  const env = cleanEnv(options.env);
  const restore: Array<() => void> = [];
  let stdout = "";
  let stderr = "";
  try {
    restore.push(swapEnvironment(env));
    const cwd = process.cwd();
    process.chdir(options.cwd ?? ROOT);
    restore.push(() => process.chdir(cwd));
    for (const stream of [process.stdin, process.stdout, process.stderr]) restore.push(override(stream, "isTTY", false));
    // As the binary's reserveStdout does: only lllm's own output reaches stdout; what tool code prints goes to
    // stderr, marked with the tool's name.
    const capture = (into: "stdout" | "stderr"): Write =>
      function write(chunk, encoding, callback) {
        const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString(typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
        const scope = isOwnStdoutWrite() ? undefined : currentToolScope();
        if (scope) stderr += markLines(scope, text);
        else if (into === "stdout" && isOwnStdoutWrite()) stdout += text;
        else stderr += text;
        const done = typeof encoding === "function" ? encoding : callback;
        if (typeof done === "function") queueMicrotask(() => (done as () => void)());
        return true;
      };
    restore.push(override(process.stdout, "write", capture("stdout")), override(process.stderr, "write", capture("stderr")));
    const previousCode = process.exitCode;
    process.exitCode = undefined;
    restore.push(() => (process.exitCode = previousCode));
    const code = await main([process.execPath, "lllm", ...args], { inProcess: true });
    return { code, stdout, stderr };
  } finally {
    for (const undo of restore.reverse()) undo();
  }
}

/** Set a property of an object for the duration of a call; returns the function that puts the old one back. */
function override<T extends object, K extends keyof T>(target: T, key: K, value: unknown): () => void {
  const own = Object.getOwnPropertyDescriptor(target, key);
  Object.defineProperty(target, key, { value, configurable: true, writable: true, enumerable: own?.enumerable ?? true });
  return () => {
    if (own) Object.defineProperty(target, key, own);
    else delete target[key];
  };
}

/**
 * Make `process.env` exactly `env` and return the function that restores it. This helper is the one place that
 * writes process.env outside `vi.stubEnv`: it must remove every variable the worker has (vi.stubEnv can only
 * set them) and must not undo a test file's own stubs when it restores.
 */
function swapEnvironment(env: NodeJS.ProcessEnv): () => void {
  const saved = { ...process.env };
  const replace = (values: NodeJS.ProcessEnv): void => {
    for (const name of Object.keys(process.env)) if (values[name] === undefined) delete process.env[name];
    for (const [name, value] of Object.entries(values)) if (value !== undefined) process.env[name] = value;
  };
  replace(env);
  return () => replace(saved);
}
