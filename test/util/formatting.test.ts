import { describe, expect, it } from "vitest";
import { compareNames } from "../../src/util/compareNames.js";
import { formatCount } from "../../src/util/formatCount.js";
import { plural } from "../../src/util/plural.js";

describe("formatCount", () => {
  it("groups thousands as en-US does", () => {
    for (const count of [0, 7, 999, 1000, 12_345, 1_234_567, 1_000_000_000]) expect(formatCount(count)).toBe(count.toLocaleString("en-US"));
  });
});

describe("compareNames", () => {
  it("orders names ignoring case first, as a reader expects", () => {
    expect(["get_weather", "Zeta", "alpha", "Beta", "beta", "forecast"].sort(compareNames)).toEqual(["alpha", "Beta", "beta", "forecast", "get_weather", "Zeta"]);
  });
});

describe("plural", () => {
  it("says one of a thing in the singular, and any other count in the plural", () => {
    expect([0, 1, 2].map((count) => plural(count, "turn"))).toEqual(["0 turns", "1 turn", "2 turns"]);
    expect(plural(1, "scripted turn")).toBe("1 scripted turn");
    expect(plural(3, "retry", "retries")).toBe("3 retries");
  });
});
