import type { RetryNotice } from "../providers/requestWithRetries.js";
import { paint, writeErr } from "./output.js";

/** Without `--verbose`, retries are announced once, and only when they have kept the user waiting this long. */
export const QUIET_RETRY_NOTICE_AFTER_MS = 3000;

/**
 * Reports model-request retries on stderr: with `--verbose` each one (attempt n/N, cause, wait); without, a single
 * line once retrying has lasted a few seconds, so that a run is never silent for long without saying why.
 */
export function retryReporter(verbose: boolean, write: (line: string) => void = writeErr): (notice: RetryNotice) => void {
  let announced = false;
  return (notice) => {
    const wait = `${(notice.waitMs / 1000).toFixed(1)} s`;
    if (verbose) {
      write(`${paint("yellow", "lllm: retry:")} model \`${notice.model}\` at ${notice.baseURL}: attempt ${notice.attempt}/${notice.maxAttempts} failed (${notice.cause}); trying again in ${wait}`);
      return;
    }
    if (announced || notice.elapsedMs + notice.waitMs < QUIET_RETRY_NOTICE_AFTER_MS) return;
    announced = true;
    write(`${paint("yellow", "lllm:")} model \`${notice.model}\` at ${notice.baseURL} is failing (${notice.cause}); retrying (attempt ${notice.attempt + 1} of ${notice.maxAttempts}; --verbose shows each retry)`);
  };
}
