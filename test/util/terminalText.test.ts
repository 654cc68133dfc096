import { describe, expect, it } from "vitest";
import { terminalText } from "../../src/util/terminalText.js";

describe("terminalText", () => {
  it("writes every control character but newline and tab as an escape", () => {
    expect(terminalText("a\u001b[8mb\u001b]0;t\u0007\r\u009b2J\u202ec\td\n")).toBe("a\\u001b[8mb\\u001b]0;t\\u0007\\r\\u009b2J\\u202ec\td\n");
  });

  it("with keepOwnStyles, keeps exactly the colours lllm writes and escapes any other sequence", () => {
    expect(terminalText("\u001b[31mred\u001b[39m \u001b[2mdim\u001b[22m \u001b[8mhidden\u001b[0m \u001b[31;1m", { keepOwnStyles: true })).toBe("\u001b[31mred\u001b[39m \u001b[2mdim\u001b[22m \\u001b[8mhidden\\u001b[0m \\u001b[31;1m");
  });
});
