import { describe, expect, it } from "vitest";
import { linkedSignal } from "../../src/util/linkedSignal.js";

describe("linkedSignal", () => {
  it("aborts with the reason of the first source that aborts, and is already aborted when a source is", () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkedSignal([a.signal, b.signal]);
    expect(linked.signal.aborted).toBe(false);
    b.abort(new Error("budget"));
    expect(linked.signal.aborted).toBe(true);
    expect((linked.signal.reason as Error).message).toBe("budget");
    expect(linkedSignal([a.signal, b.signal]).signal.reason).toBe(b.signal.reason);
  });

  it("once disposed, a source's abort no longer reaches it (a batch's cancel signal keeps no run's listener)", () => {
    const source = new AbortController();
    const linked = linkedSignal([source.signal]);
    linked.dispose();
    source.abort();
    expect(linked.signal.aborted).toBe(false);
  });
});
