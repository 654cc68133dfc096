import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BatchProgress, progressLine } from "../../src/batch/BatchProgress.js";
import { registerSecret } from "../../src/util/redact.js";
import type { BatchStats } from "../../src/batch/runBatch.js";
import { formatCost } from "../../src/store/RunTally.js";

const stats = (cost: number): BatchStats => ({ ok: 120, failed: 3, skipped: 0, skippedFailed: 0, inFlight: 16, cancelled: 0, promptTokens: 40_000, completionTokens: 5_000, cost, costUnknown: 0, duplicates: 0, duplicateIds: [], startedAt: Date.now() - 10_000, pulling: false });

// The rate and the ETA come from the clock: stopped, so that a busy machine's pause between two lines cannot change them.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the batch progress line", () => {
  it("without a total (a dataset read from a pipe) shows the counts, no total and no ETA", () => {
    expect(progressLine(stats(0.012), undefined)).toMatch(/^lllm batch: 123 done \(3 failed\), 16 running, 12\.3 items\/s, 45,000 tokens, \$0\.012$/);
    expect(progressLine(stats(0.012), 500)).toMatch(/^lllm batch: 123\/500 done \(3 failed\), 16 running, 12\.3 items\/s, ETA 31 s, 45,000 tokens, \$0\.012$/);
  });

  it("under --queue, tells the items waiting for a worker from the running ones", () => {
    expect(progressLine(stats(0.012), undefined, Infinity, undefined, 10)).toMatch(/^lllm batch: 123 done \(3 failed\), 6 running, 10 waiting for a worker, 12\.3 items\/s/);
  });

  it("too wide for the terminal, leaves parts out whole: never a bare `$` or half a number", () => {
    const full = progressLine(stats(0.012), 500);
    for (let width = 20; width <= full.length; width += 1) {
      const line = progressLine(stats(0.012), 500, width);
      expect(line.length).toBeLessThanOrEqual(width);
      expect(full.startsWith(line)).toBe(true);
      expect(/(, \$0\.012|tokens|items\/s|running|\)|done|ETA \d+ s|lllm batch:)$/.test(line)).toBe(true);
    }
  });

  it("prints costs rounded, never in exponent notation", () => {
    expect([0, 0.0000045, 0.00036, 0.0045, 0.015, 0.996, 1.234, 12].map(formatCost)).toEqual(["$0", "<$0.0001", "$0.00036", "$0.0045", "$0.015", "$1.00", "$1.23", "$12.00"]);
  });

  it("prints a warning as writeErr would: keys redacted, control characters escaped, lllm's own colours kept", () => {
    const written: string[] = [];
    const stream = { write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
    const progress = new BatchProgress({ live: false, stream });
    registerSecret("sk-progress-secret-123");
    progress.print("\u001b[33mlllm: warning:\u001b[39m polling failed (sk-progress-secret-123 \u001b[2J\u001b]0;title\u0007)");
    progress.stop();
    expect(written).toEqual(["\u001b[33mlllm: warning:\u001b[39m polling failed ([redacted] \\u001b[2J\\u001b]0;title\\u0007)\n"]);
  });
});
