import { describe, expect, it } from "vitest";
import { newRunId } from "../../src/util/newRunId.js";

describe("newRunId", () => {
  it("makes distinct ULIDs that sort by time, across refills of its random pool", () => {
    const ids = Array.from({ length: 1000 }, (_, index) => newRunId(1_700_000_000_000 + index));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect([...ids].sort()).toEqual(ids);
    // The random part differs between ids of the same millisecond.
    expect(newRunId(5).slice(10)).not.toBe(newRunId(5).slice(10));
  });

  it("sorts ids made in the same millisecond in the order they were made (runs of one process, a batch's items)", () => {
    const ids = Array.from({ length: 200 }, () => newRunId(1_800_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    // A later millisecond starts afresh, still after them.
    const later = newRunId(1_800_000_000_001);
    expect(later > ids.at(-1)!).toBe(true);
    expect(later.slice(10)).not.toBe(ids.at(-1)!.slice(10));
  });
});
