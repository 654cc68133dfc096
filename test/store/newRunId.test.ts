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
});
