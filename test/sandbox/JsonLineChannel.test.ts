import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { JsonLineChannel } from "../../src/sandbox/JsonLineChannel.js";

describe("JsonLineChannel", () => {
  function open(maxLineBytes = 1000) {
    const input = new PassThrough();
    const output = new PassThrough();
    const messages: unknown[] = [];
    const invalid: string[] = [];
    const channel = new JsonLineChannel<unknown, unknown>(input, output, (message) => messages.push(message), (line) => invalid.push(line), maxLineBytes);
    return { input, output, messages, invalid, channel };
  }

  it("splits lines across and within chunks, including multi-byte characters cut in half", async () => {
    const { input, messages } = open();
    const bytes = Buffer.from('{"a":"é"}\n{"b":[1,2]}\n{"c"', "utf8");
    input.write(bytes.subarray(0, 7)); // inside the two bytes of é
    input.write(bytes.subarray(7));
    input.write(':null}\n\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(messages).toEqual([{ a: "é" }, { b: [1, 2] }, { c: null }]);
  });

  it("drops a line that is not JSON or too long, and carries on", async () => {
    const { input, messages, invalid } = open(20);
    input.write("not json\n");
    input.write(`{"long":"${"x".repeat(15)}`);
    input.write(`${"x".repeat(15)}"}\n{"ok":1}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(messages).toEqual([{ ok: 1 }]);
    expect(invalid).toEqual(["not json", "(a line longer than 20 bytes)"]);
  });

  it("writes one line per message and refuses what JSON cannot carry", () => {
    const { output, channel } = open();
    channel.send({ type: "reply", text: "two\nlines" });
    expect(output.read().toString()).toBe('{"type":"reply","text":"two\\nlines"}\n');
    expect(() => channel.send({ big: 1n })).toThrow(TypeError);
  });
});
