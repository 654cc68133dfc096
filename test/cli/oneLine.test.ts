import { describe, expect, it } from "vitest";
import { oneLine } from "../../src/cli/runChatShared.js";

// The one-line form of a model's or a tool's text on stderr (`lllm run --verbose`, chat's tool lines).
describe("oneLine", () => {
  it("flattens whitespace and escapes control characters", () => {
    expect(oneLine("a\n  b\u001b[2Jc")).toBe("a b\\u001b[2Jc");
  });

  it("cuts at the width with …, never inside an escape nor between the halves of a character", () => {
    const escape = oneLine(`${"x".repeat(117)}\u001b[2J and more`, 120);
    expect(escape).toBe(`${"x".repeat(117)}…`);
    const emoji = oneLine(`${"y".repeat(118)}\u{1F600} and more`, 120);
    expect(emoji).toBe(`${"y".repeat(118)}…`);
    const fits = oneLine(`${"z".repeat(117)}\u{1F600} and more`, 120);
    expect(fits).toBe(`${"z".repeat(117)}\u{1F600}…`);
    for (const cut of [escape, emoji, fits]) expect(cut.length).toBeLessThanOrEqual(120);
  });
});
