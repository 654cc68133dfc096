import { describe, expect, it } from "vitest";
import { memoryParkedStorage, ParkedItems } from "../../src/batch/ParkedItems.js";

const item = (id: string) => ({ id, index: Number(id), input: `q${id}`, vars: {} });

describe("ParkedItems", () => {
  it("runs parked items again in the order their answers came, and one said ready while its attempt was still ending", () => {
    const parked = new ParkedItems(memoryParkedStorage(), (id) => `k${id}`);
    let woken = 0;
    parked.onReady = () => (woken += 1);
    for (const id of ["1", "2", "3"]) parked.started(id);
    parked.park({ item: item("1"), startedAt: 1 });
    parked.park({ item: item("2"), startedAt: 2, recordId: "R2" });
    expect(parked.hasReady).toBe(false);
    parked.ready(["k2"]);
    parked.ready(["k3", "k9"]); // 3's attempt has not parked yet; 9 is not in this run
    parked.ready(["k1"]);
    expect(parked.next()).toEqual({ item: item("2"), startedAt: 2, recordId: "R2" });
    expect(parked.next()?.item.id).toBe("1");
    expect(parked.next()).toBeUndefined();
    parked.park({ item: item("3"), startedAt: 3 });
    expect(parked.next()?.item.id).toBe("3");
    expect(parked.size).toBe(0);
    expect(woken).toBe(3);
  });
});
