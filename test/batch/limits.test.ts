import { afterEach, describe, expect, it, vi } from "vitest";
import { AdaptiveConcurrency } from "../../src/batch/AdaptiveConcurrency.js";
import { ProviderGate } from "../../src/batch/ProviderGate.js";

afterEach(() => {
  vi.useRealTimers();
});

/** Whether a promise has settled, after letting pending callbacks run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

describe("ProviderGate", () => {
  it("a 429's retry-after holds every new call to that provider, and only to that one", async () => {
    vi.useFakeTimers();
    const gate = new ProviderGate();
    gate.pause("http://a/v1", 1000);
    const first = gate.pass("http://a/v1");
    const second = gate.pass("http://a/v1");
    expect(await settled(gate.pass("http://b/v1"))).toBe(true);
    await vi.advanceTimersByTimeAsync(999);
    expect(await settled(first)).toBe(false);
    expect(await settled(second)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(first)).toBe(true);
    expect(await settled(second)).toBe(true);
  });

  it("--rpm lets N calls a minute through, --tpm holds calls once a minute's tokens are spent", async () => {
    vi.useFakeTimers();
    const gate = new ProviderGate({ rpm: 2, tpm: 100 });
    expect(await settled(gate.pass("p"))).toBe(true);
    expect(await settled(gate.pass("p"))).toBe(true);
    const third = gate.pass("p");
    await vi.advanceTimersByTimeAsync(59_000);
    expect(await settled(third)).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await settled(third)).toBe(true);

    const tokens = new ProviderGate({ tpm: 100 });
    tokens.addTokens("p", 150);
    const held = tokens.pass("p");
    expect(await settled(held)).toBe(false);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await settled(held)).toBe(true);
  });

  it("a waiting call stops at once when the batch is cancelled", async () => {
    const gate = new ProviderGate();
    gate.pause("p", 60_000);
    const controller = new AbortController();
    const waiting = gate.pass("p", controller.signal);
    controller.abort(new Error("cancelled"));
    await expect(waiting).rejects.toThrow("cancelled");
  });
});

describe("AdaptiveConcurrency", () => {
  it("halves on a 429 (once per cool-down), grows back by one per round of successes, never above the maximum", () => {
    let now = 0;
    const limit = new AdaptiveConcurrency(16, { coolDownMs: 1000, now: () => now });
    limit.backOff();
    limit.backOff(); // the same burst
    expect(limit.limit).toBe(8);
    now = 1500;
    limit.backOff();
    expect(limit.limit).toBe(4);
    for (let index = 0; index < 4; index += 1) limit.succeeded();
    expect(limit.limit).toBe(5);
    for (let index = 0; index < 1000; index += 1) limit.succeeded();
    expect(limit.limit).toBe(16);
  });
});
