import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { elicitOnTerminal } from "../../src/tools/elicitOnTerminal.js";
import type { ElicitRequest } from "../../src/tools/index.js";

/** `ctx.elicit` on a terminal (outside MCP): the user answers each field on a line of stdin; prompts go to stderr. */

const FORM: ElicitRequest = {
  message: "Book a table",
  requestedSchema: {
    type: "object",
    properties: {
      name: { type: "string", title: "Your name", default: "Ada" },
      guests: { type: "integer", description: "how many" },
      room: { type: "string", oneOf: [{ const: "in", title: "Inside" }, { const: "out", title: "Terrace" }] },
      extras: { type: "array", items: { type: "string", enum: ["wine", "cake", "candles"] } },
      vegan: { type: "boolean", default: false },
    },
    required: ["guests"],
  },
};

async function answer(lines: string[], request: ElicitRequest = FORM): Promise<{ result: unknown; shown: string }> {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = "";
  output.on("data", (chunk: Buffer) => (shown += chunk.toString()));
  const pending = elicitOnTerminal(request, { input, output });
  input.end(lines.map((line) => `${line}\n`).join(""));
  return { result: await pending, shown };
}

describe("elicitOnTerminal", () => {
  it("asks each field, takes defaults on an empty line, numbered choices and comma lists, and asks again after a wrong answer", async () => {
    const { result, shown } = await answer(["", "two", "4", "2", "1, 3", ""]);
    expect(result).toEqual({ action: "accept", content: { name: "Ada", guests: 4, room: "out", extras: ["wine", "candles"], vegan: false } });
    expect(shown).toContain("lllm: Book a table");
    expect(shown).toContain("Your name [Ada]: ");
    expect(shown).toContain("guests (how many): ");
    expect(shown).toContain("answer a whole number");
    expect(shown).toContain("room 1) Inside, 2) Terrace: ");
    expect(shown).toContain("extras 1) wine, 2) cake, 3) candles (comma-separated): ");
    expect(shown).toContain("vegan (y/n) [false]: ");
  });

  it("declines on !decline, and cancels at the end of input or after three wrong answers", async () => {
    expect((await answer(["Bob", "!decline"])).result).toEqual({ action: "decline" });
    expect((await answer(["Bob"])).result).toEqual({ action: "cancel" });
    expect((await answer(["", "x", "y", "z"])).result).toEqual({ action: "cancel" });
  });

  it("shows control characters of the request's text as escapes (the text may be an MCP server's)", async () => {
    const { result, shown } = await answer(["1"], { message: "Hi\u001b[2J", requestedSchema: { type: "object", properties: { pick: { type: "string", description: "x\u0007", enum: ["a\u001b[31m"] } } } });
    expect(result).toEqual({ action: "accept", content: { pick: "a\u001b[31m" } });
    expect(shown).toContain("lllm: Hi\\u001b[2J");
    expect(shown).toContain("pick (x\\u0007) 1) a\\u001b[31m: ");
    expect(shown).not.toContain("\u001b");
  });

  it("shows no character of the request's text that redraws the screen or disguises text: C1 controls, carriage returns, bidi overrides", async () => {
    const { shown } = await answer([""], { message: "Ok\r\u009b2Jlllm: approval of a tool call\u202eevil\u2028next", requestedSchema: { type: "object", properties: { more: { type: "boolean", title: "More?\u001b[1A\u001b[2K", default: false } } } });
    expect(shown).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    expect(shown).toContain("lllm: Ok\\r\\u009b2Jlllm: approval of a tool call\\u202eevil\\u2028next\n");
    expect(shown).toContain("  More?\\u001b[1A\\u001b[2K (y/n) [false]: ");
  });
});
