import { describe, expect, it } from "vitest";
import { retryReporter } from "../../src/cli/retryReporter.js";
import type { RetryNotice } from "../../src/providers/requestWithRetries.js";

const notice = (attempt: number, elapsedMs: number, waitMs: number): RetryNotice => ({ model: "gpt-test", baseURL: "http://127.0.0.1:1/v1", attempt, maxAttempts: 5, cause: "HTTP 500: boom", waitMs, elapsedMs });

/** Without colour codes, whatever FORCE_COLOR says. */
const plain = (line: string): string => line.replace(/\u001b\[\d+m/g, "");

describe("retryReporter", () => {
  it("with --verbose, one line per retry with attempt n/N, cause and wait", () => {
    const lines: string[] = [];
    const report = retryReporter(true, (line) => lines.push(plain(line)));
    report(notice(1, 0, 250));
    report(notice(2, 300, 1500));
    expect(lines).toEqual([
      "lllm: retry: model `gpt-test` at http://127.0.0.1:1/v1: attempt 1/5 failed (HTTP 500: boom); trying again in 0.3 s",
      "lllm: retry: model `gpt-test` at http://127.0.0.1:1/v1: attempt 2/5 failed (HTTP 500: boom); trying again in 1.5 s",
    ]);
  });

  it("without --verbose, quiet while retrying is short, then one line, once", () => {
    const lines: string[] = [];
    const report = retryReporter(false, (line) => lines.push(plain(line)));
    report(notice(1, 0, 500));
    report(notice(2, 600, 1000));
    expect(lines).toEqual([]);
    report(notice(3, 1700, 2000));
    report(notice(4, 3800, 4000));
    expect(lines).toEqual(["lllm: model `gpt-test` at http://127.0.0.1:1/v1 is failing (HTTP 500: boom); retrying (attempt 4 of 5; --verbose shows each retry)"]);
  });
});
