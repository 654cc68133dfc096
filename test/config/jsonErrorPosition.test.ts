import { describe, expect, it } from "vitest";
import { jsonErrorPosition } from "../../src/config/jsonErrorPosition.js";

describe("jsonErrorPosition", () => {
  it("finds nothing in JSON that JSON.parse accepts", () => {
    for (const text of ['{"A": "x\\"y\\u00e9", "B": [1, -2.5e3, true, false, null, {}], "C": {}}\n', "[]", " 0 ", '"s"']) {
      expect(() => JSON.parse(text)).not.toThrow();
      expect(jsonErrorPosition(text)).toBeUndefined();
    }
  });

  it("gives the line and column of the first fault", () => {
    expect(jsonErrorPosition('{\n  "KEY": sk-abc\n}')).toEqual({ line: 2, column: 10 });
    expect(jsonErrorPosition('{"A": "x",}')).toEqual({ line: 1, column: 11 });
    expect(jsonErrorPosition('{"A": "x"')).toEqual({ line: 1, column: 10 });
    expect(jsonErrorPosition('{"A": "x\ny"}')).toEqual({ line: 1, column: 9 });
    expect(jsonErrorPosition('{"A": 01}')).toEqual({ line: 1, column: 8 });
    expect(jsonErrorPosition("{} x")).toEqual({ line: 1, column: 4 });
    expect(jsonErrorPosition("")).toEqual({ line: 1, column: 1 });
  });
});
