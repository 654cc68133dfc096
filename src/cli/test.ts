import { availableParallelism } from "node:os";
import { ConfigError } from "../errors.js";
import type { Reporter } from "../evals/reporters/Reporter.js";
import { stopSignal } from "./handleSignals.js";
import { useColor, warn, writeErr, writeOut } from "./output.js";

export interface TestCommandOptions {
  record?: boolean;
  update?: boolean;
  offline?: boolean;
  json?: boolean;
  junit?: string;
  filter?: string;
  concurrency?: string;
  bail?: boolean;
  /** `--no-log` sets it false. */
  log?: boolean;
  verbose?: boolean;
}

/** `lllm test [PATH...]`: run test files; the report on stderr, `--json` on stdout, `--junit` to a file. Exit 1 when a case failed. */
export async function testCommand(paths: string[], options: TestCommandOptions): Promise<void> {
  const concurrency = options.concurrency === undefined ? availableParallelism() : Number(options.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new ConfigError("test_usage", `--concurrency must be a whole number >= 1 (got \`${options.concurrency}\`)`, { location: { file: "--concurrency" } });
  const [{ runTests }, { textReporter }, { jsonReporter }, { junitReporter }] = await Promise.all([
    import("../evals/runTests.js"),
    import("../evals/reporters/textReporter.js"),
    import("../evals/reporters/jsonReporter.js"),
    import("../evals/reporters/junitReporter.js"),
  ]);
  const report = bufferedWriter((text) => writeErr(text.replace(/\n$/, "")));
  const reporters: Reporter[] = [textReporter({ write: report.write, color: useColor(process.stderr), ...(options.verbose ? { verbose: true } : {}) })];
  if (options.json) reporters.push(jsonReporter({ write: (text) => writeOut(text) }));
  if (options.junit !== undefined) reporters.push(junitReporter({ file: options.junit }));
  const run = await runTests({
    paths,
    ...(options.record ? { record: true } : {}),
    ...(options.update ? { update: true } : {}),
    ...(options.offline ? { offline: true } : {}),
    ...(options.filter !== undefined ? { filter: options.filter } : {}),
    ...(options.bail ? { bail: true } : {}),
    ...(options.log === false ? { log: false } : {}),
    concurrency,
    reporters,
    signal: stopSignal(),
    warn: (message) => {
      report.flush();
      warn(message);
    },
  }).finally(report.flush);
  if (!run.ok) process.exitCode = 1;
}

/**
 * The report's lines, written together at most every 100 ms: a write to a pipe costs more than a replayed case, and
 * a thousand cases would otherwise spend more time writing their lines than running.
 */
function bufferedWriter(write: (text: string) => void): { write: (text: string) => void; flush: () => void } {
  let pending = "";
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (pending === "") return;
    const text = pending;
    pending = "";
    write(text);
  };
  return {
    write: (text) => {
      pending += text;
      timer ??= setTimeout(flush, 100);
    },
    flush,
  };
}
