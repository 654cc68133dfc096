import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readFileLines } from "../../src/util/readFileLines.js";
import { tempDir } from "../helpers/tempTree.js";

async function linesOf(text: string | Buffer): Promise<string[]> {
  const file = path.join(tempDir(), "lines.jsonl");
  writeFileSync(file, text);
  const lines: string[] = [];
  for await (const line of readFileLines(file)) lines.push(line);
  return lines;
}

describe("readFileLines", () => {
  it("gives each line, a last line without its newline too, and nothing for an empty file", async () => {
    expect(await linesOf("a\nbb\n\nccc")).toEqual(["a", "bb", "", "ccc"]);
    expect(await linesOf("a\n")).toEqual(["a"]);
    expect(await linesOf("")).toEqual([]);
  });

  it("keeps lines longer than its buffer whole, and characters cut between two reads", async () => {
    // 64 KB reads: a line of 200,000 bytes spans four, and the 3-byte "€" lands across a read's end.
    const long = `${"x".repeat(65_535)}€${"y".repeat(134_462)}`;
    const lines = [long, "{\"ok\":true}", "ä".repeat(40_000)];
    expect(await linesOf(Buffer.from(lines.join("\n") + "\n"))).toEqual(lines);
  });
});
