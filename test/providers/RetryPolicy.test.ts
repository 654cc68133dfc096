import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_POLICY, parseRetryAfter, retryDelayMs } from "../../src/providers/RetryPolicy.js";

describe("retry delays", () => {
  it("reads retry-after as seconds or as an HTTP date, and prefers retry-after-ms", () => {
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(parseRetryAfter(new Headers({ "retry-after": "2" }), now)).toBe(2000);
    expect(parseRetryAfter(new Headers({ "retry-after": "Wed, 01 Jan 2025 00:00:05 GMT" }), now)).toBe(5000);
    expect(parseRetryAfter(new Headers({ "retry-after": "2", "retry-after-ms": "150" }), now)).toBe(150);
    expect(parseRetryAfter(new Headers({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined();
  });

  it("backs off exponentially with jitter, capped, and lets retry-after win", () => {
    const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(retryDelayMs(0, policy, undefined, () => 0)).toBe(50);
    expect(retryDelayMs(0, policy, undefined, () => 1)).toBe(100);
    expect(retryDelayMs(2, policy, undefined, () => 1)).toBe(400);
    expect(retryDelayMs(10, policy, undefined, () => 1)).toBe(1000);
    expect(retryDelayMs(0, policy, 3000)).toBe(3000);
  });
});
