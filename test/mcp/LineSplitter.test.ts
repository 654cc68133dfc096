import { describe, expect, it } from "vitest";
import { LineSplitter, type OversizedLine } from "../../src/mcp/LineSplitter.js";

function splitter(maxLineBytes: number): { lines: string[]; oversized: OversizedLine[]; push: (text: string) => void } {
  const lines: string[] = [];
  const oversized: OversizedLine[] = [];
  const instance = new LineSplitter({ maxLineBytes, onLine: (line) => lines.push(line), onOversized: (line) => oversized.push(line) });
  return { lines, oversized, push: (text) => instance.push(Buffer.from(text)) };
}

describe("LineSplitter", () => {
  it("joins lines split across chunks, drops \\r and blank lines", () => {
    const { lines, push } = splitter(1000);
    push('{"a":');
    push('1}\r\n\n{"b":2}\n{"c"');
    push(":3}\n");
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it("drops a line over the limit as it arrives, finds its id at either end, and goes on with the next line", () => {
    const { lines, oversized, push } = splitter(100);
    const response = [`{"result":{"text":"${"x".repeat(150)}`, `${"y".repeat(150)}"},"jsonrpc":"2.0","id":7}`];
    const request = `{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"p":"${"z".repeat(200)}"}}`;
    const notification = `{"jsonrpc":"2.0","method":"notifications/message","params":{"p":"${"z".repeat(200)}"}}`;
    push(response[0]!);
    push(`${response[1]}\n{"ok":1}\n`);
    push(`${request}\n${notification}\n`);
    expect(lines).toEqual(['{"ok":1}']);
    expect(oversized).toEqual([
      { bytes: response.join("").length, id: 7, hasMethod: false },
      { bytes: request.length, id: "abc", hasMethod: true },
      { bytes: notification.length, id: undefined, hasMethod: true },
    ]);
  });
});
