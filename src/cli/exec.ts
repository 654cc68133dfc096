import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError, InterruptedError } from "../errors.js";
import { ProxyManager } from "../proxies/index.js";
import { loadProxies } from "../registry/loadProxies.js";
import { PythonKernel, type IsolationBackend } from "../sandbox/index.js";
import { MAX_MESSAGE_BYTES } from "../sandbox/KernelProcess.js";
import { callApiKernelOptions, PROXY_DEFAULTS } from "../tactics/proxyTools.js";
import { stopSignal } from "./handleSignals.js";
import { loadRegistry } from "./loadRegistry.js";
import { redactSecrets } from "../util/redact.js";
import { warn } from "./output.js";
import { writeOwnStdout } from "../util/ownStdout.js";
import { terminalText } from "../util/terminalText.js";

interface ExecOptions {
  proxy?: string[];
  file?: string;
  package?: string[];
  sandbox?: string;
  timeout?: string;
  cache?: boolean;
}

/**
 * `lllm exec --proxy weather [--file code.py]`: run Python in the interpreter an agent would get, with CALL_API
 * for the named proxies, and print what it prints. The code comes from the file or standard input.
 */
export async function execCommand(options: ExecOptions): Promise<void> {
  const code = readCode(options.file);
  const backend = (options.sandbox ?? "auto") as IsolationBackend;
  if (!["auto", "bwrap", "gvisor", "none"].includes(backend)) {
    throw new ConfigError("usage_sandbox", `--sandbox must be auto, bwrap, gvisor or none (got \`${options.sandbox}\`)`, { location: { file: "--sandbox" } });
  }
  const timeout = options.timeout === undefined ? PROXY_DEFAULTS.timeout : Number(options.timeout);
  if (!Number.isFinite(timeout) || timeout < 0) throw new ConfigError("usage_timeout", `--timeout must be a number of seconds (got \`${options.timeout}\`)`, { location: { file: "--timeout" } });
  const registry = await loadRegistry(options.package);
  const manager = new ProxyManager({ proxies: await loadProxies(registry), activateProxies: options.proxy ?? [], activatedBy: "--proxy", ...(options.cache === false ? { useCache: false } : {}) });
  const kernel = await PythonKernel.start({
    ...callApiKernelOptions(manager),
    maxOutputChars: 0,
    timeout,
    isolation: { backend },
    onWarning: warn,
  });
  // A signal closes every kernel (see handleSignals): the cell then ends with `sandbox_closed`, reported as the
  // interruption it is.
  const signal = stopSignal();
  try {
    const result = await kernel.execute(code);
    // Data, as an answer is: byte for byte into a pipe; on a terminal, what an API sent back cannot drive it.
    const output = redactSecrets(result.output);
    writeOwnStdout(process.stdout.isTTY ? terminalText(output) : output);
    if (result.error) process.exitCode = 1; // the traceback is in the output; a shell should see the failure
    if (result.outputCut) {
      // Incomplete data must not look like success to a pipeline.
      warn(`the output was cut at ${MAX_MESSAGE_BYTES / 2 ** 20} MB, the most one run can return; write large output to a file instead`);
      process.exitCode = 1;
    }
  } catch (error) {
    if (signal.aborted && signal.reason instanceof InterruptedError) throw signal.reason;
    throw error;
  } finally {
    await kernel.close();
  }
}

function readCode(file: string | undefined): string {
  if (file !== undefined) {
    const absolute = path.resolve(file);
    if (!existsSync(absolute)) throw new ConfigError("usage_file", `code file \`${file}\` does not exist`, { location: { file: "--file" } });
    try {
      return readFileSync(absolute, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason = code === "EISDIR" ? "it is a folder" : code === "EACCES" ? "permission denied" : (error as Error).message;
      throw new ConfigError("usage_file", `code file \`${file}\` cannot be read (${reason})`, { location: { file: "--file" }, hint: "give a Python file, e.g. --file code.py, or pipe the code on standard input", cause: error });
    }
  }
  if (process.stdin.isTTY) {
    throw new ConfigError("usage_code", "no code: pass --file code.py or pipe it on standard input", { hint: `e.g. echo 'print(CALL_API("weather/current/Tokyo", {}))' | lllm exec --proxy weather` });
  }
  return readFileSync(0, "utf8");
}
