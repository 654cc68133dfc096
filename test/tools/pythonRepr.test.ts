import { describe, expect, it } from "vitest";
import { pythonRepr } from "../../src/util/pythonRepr.js";

// Expected texts are Python 3.11's own repr() of the same values.
describe("pythonRepr", () => {
  it("renders a dict of arguments like Python", () => {
    expect(pythonRepr({ city: "Paris" })).toBe("{'city': 'Paris'}");
    expect(pythonRepr({ city: "Paris", n: [1, 2.5, true, null], d: {} })).toBe("{'city': 'Paris', 'n': [1, 2.5, True, None], 'd': {}}");
    expect(pythonRepr([])).toBe("[]");
    expect(pythonRepr(false)).toBe("False");
    expect(pythonRepr(undefined)).toBe("None");
  });

  it("picks quotes and escapes as Python does", () => {
    expect(pythonRepr("it's")).toBe(`"it's"`);
    expect(pythonRepr(`a'b"c`)).toBe(`'a\\'b"c'`);
    expect(pythonRepr("line\nnext\ttab\\")).toBe("'line\\nnext\\ttab\\\\'");
    expect(pythonRepr("café 🌍")).toBe("'café 🌍'");
    expect(pythonRepr("\x01\x7f\xa0\u200b\u{e0001}")).toBe("'\\x01\\x7f\\xa0\\u200b\\U000e0001'");
    expect(pythonRepr("\ud800")).toBe("'\\ud800'");
  });

  it("marks a container that contains itself instead of looping", () => {
    const loop: Record<string, unknown> = { a: 1 };
    loop.self = loop;
    expect(pythonRepr(loop)).toBe("{'a': 1, 'self': {...}}");
  });
});
