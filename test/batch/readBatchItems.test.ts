import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { BatchItem } from "../../src/batch/BatchItem.js";
import { capCsvRecords, type OversizedRecord } from "../../src/batch/capCsvRecords.js";
import { readBatchItems } from "../../src/batch/readBatchItems.js";
import { readLines } from "../../src/batch/readLines.js";
import { removeTempDirs, tempDir } from "./batchTestHelpers.js";

afterEach(() => removeTempDirs());

/** The text cut into chunks of `size` bytes, as a stream gives it (a line, a quote, a CRLF may straddle two). */
async function* chunks(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text);
  for (let start = 0; start < bytes.length; start += size) yield bytes.subarray(start, start + size);
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

async function readFile(text: string, options: { format: "jsonl" | "csv" | "lines"; maxLineBytes?: number }): Promise<BatchItem[]> {
  const file = path.join(tempDir(), `items.${options.format}`);
  writeFileSync(file, text);
  return collect(readBatchItems({ file, label: "items", ...options }));
}

describe("readLines", () => {
  it("splits on newlines wherever the chunks end, drops a CR before the newline, keeps UTF-8 whole", async () => {
    const text = "first\r\nsecond é ✓\n\nlast without newline";
    for (const size of [1, 2, 3, 7, 1000]) {
      expect((await collect(readLines(chunks(text, size), 100))).flat()).toEqual([
        { lineNumber: 1, text: "first" },
        { lineNumber: 2, text: "second é ✓" },
        { lineNumber: 3, text: "" },
        { lineNumber: 4, text: "last without newline" },
      ]);
    }
  });

  it("gives a line over the cap as its size only, and goes on with the next line", async () => {
    const text = `short\n${"x".repeat(50)}\nafter\n`;
    for (const size of [1, 4, 16, 1000]) {
      expect((await collect(readLines(chunks(text, size), 20))).flat()).toEqual([
        { lineNumber: 1, text: "short" },
        { lineNumber: 2, bytes: 50 },
        { lineNumber: 3, text: "after" },
      ]);
    }
  });
});

describe("capCsvRecords", () => {
  it("passes records through as they are, quoted newlines included, and swaps a record over the cap for its empty lines", async () => {
    const long = `3,"${"y".repeat(40)}\nstill the same record"`;
    const text = `id,input\n1,"a, quoted\nnewline"\n${long}\n4,"say ""hi"""\n`;
    for (const size of [1, 3, 5, 1000]) {
      const oversized: OversizedRecord[] = [];
      const out = Buffer.concat(await collect(capCsvRecords(chunks(text, size), 30, (record) => oversized.push(record)))).toString();
      expect(out).toBe(`id,input\n1,"a, quoted\nnewline"\n\n\n4,"say ""hi"""\n`);
      expect(oversized).toEqual([{ lineNumber: 4, bytes: Buffer.byteLength(long), first: false }]);
    }
  });

  it("marks an oversized first record (the header), empty lines before it not counting", async () => {
    const oversized: OversizedRecord[] = [];
    await collect(capCsvRecords(chunks(`\n${"h".repeat(40)}\nrow\n`, 8), 30, (record) => oversized.push(record)));
    expect(oversized).toEqual([{ lineNumber: 2, bytes: 40, first: true }]);
  });
});

describe("readBatchItems", () => {
  it("a UTF-8 byte order mark before the first line is not part of it (JSONL, text lines), CRLF lines or not", async () => {
    const bom = "\uFEFF";
    expect(await readFile(`${bom}"first"\r\n{"id": "b", "input": "second"}\r\n`, { format: "jsonl" })).toEqual([
      { id: "1", index: 0, input: "first", vars: {} },
      { id: "b", index: 1, input: "second", vars: {} },
    ]);
    expect(await readFile(`${bom}first\n${bom}second\n`, { format: "lines" })).toEqual([
      { id: "1", index: 0, input: "first", vars: {} },
      { id: "2", index: 1, input: `${bom}second`, vars: {} }, // only the file's first bytes are a byte order mark
    ]);
  });

  it("a JSONL or text line over --max-line-size fails its item (its line number, file:line, the size), the next lines are read", async () => {
    const jsonl = await readFile(`"one"\n${JSON.stringify("z".repeat(3000))}\n{"id": "q3", "input": "three"}\n`, { format: "jsonl", maxLineBytes: 1000 });
    expect(jsonl.map((item) => [item.id, item.input, item.problem?.code])).toEqual([
      ["1", "one", undefined],
      ["2", null, "batch_line_too_long"],
      ["q3", "three", undefined],
    ]);
    expect(jsonl[1]!.problem!.message).toMatch(/^items:2: the line is 0\.0029 MB, over the limit of 0\.00095 MB a line may have; it is not run \(--max-line-size raises the limit, e.g\. --max-line-size 1M\)$/);
    const lines = await readFile(`a\n${"b".repeat(2000)}\nc`, { format: "lines", maxLineBytes: 1000 });
    expect(lines.map((item) => [item.id, item.input, item.problem?.code])).toEqual([
      ["1", "a", undefined],
      ["2", null, "batch_line_too_long"],
      ["3", "c", undefined],
    ]);
  });

  it("a CSV with both line endings (a CRLF file with a row appended with LF, or the reverse) keeps them out of the values", async () => {
    for (const text of ['input,id\r\na,x\r\nb,y\n', 'input,id\na,x\r\n"b\r\nc",y\r\n']) {
      const items = await readFile(text, { format: "csv" });
      expect(items.map((item) => item.id)).toEqual(["x", "y"]);
      expect(items[0]!.input).toBe("a");
    }
  });

  it("a CSV row of another length than the header fails its item alone; the rows after it run (it stopped the whole batch)", async () => {
    const items = await readFile('id,input\na,Paris?\nshort\nc,"Oslo?",extra\nd,Rome?\n', { format: "csv" });
    expect(items.map((item) => [item.id, item.input, item.problem?.code])).toEqual([
      ["a", "Paris?", undefined],
      ["3", null, "batch_bad_line"],
      ["4", null, "batch_bad_line"],
      ["d", "Rome?", undefined],
    ]);
    expect(items[1]!.problem!.message).toBe('items:3: the row has 1 value, the header 2 columns; it is not run (a value that holds a comma is quoted: "a, b")');
    expect(items[2]!.problem!.message).toContain("items:4: the row has 3 values, the header 2 columns");
    // A quote never closed cannot be resynchronised: the batch stops there, saying what to check.
    await expect(readFile('id,input\na,"Paris?\nb,Rome?\n', { format: "csv" })).rejects.toMatchObject({ code: "batch_bad_csv", hint: expect.stringContaining("a quote inside it doubled") });
  });

  it("a CSV header naming a column twice stops the batch with a clear error, not the last column's values", async () => {
    await expect(readFile("input,id,input\na,1,b\n", { format: "csv" })).rejects.toMatchObject({ code: "batch_bad_csv", message: "items:1: the header row names the column `input` twice" });
  });

  it("a CSV without an input column stops the batch at its header, a header alone too (not a batch of nothing)", async () => {
    for (const text of ["question,id\n", "question,id\nwhy,1\n"]) {
      await expect(readFile(text, { format: "csv" })).rejects.toMatchObject({ code: "batch_no_input_column", message: "items: the CSV has no `input` column" });
    }
    expect(await readFile("input,id\n", { format: "csv" })).toEqual([]);
  });

  it("a CSV record over the cap fails its item in file order; the rows after it keep their line numbers as ids", async () => {
    const big = "w".repeat(200_000); // spans several chunks of the file stream
    const items = await readFile(`input,city\nfirst,Oslo\n"${big}\n${big}",Rome\n"multi\nline",Paris\nlast,Lima\n"${big}",Nowhere\n`, { format: "csv", maxLineBytes: 100_000 });
    expect(items.map((item) => [item.id, item.input, item.vars, item.problem?.code])).toEqual([
      ["2", "first", { city: "Oslo" }, undefined],
      ["3", null, {}, "batch_line_too_long"],
      ["6", "multi\nline", { city: "Paris" }, undefined],
      ["7", "last", { city: "Lima" }, undefined],
      ["8", null, {}, "batch_line_too_long"],
    ]);
    expect(items[1]!.problem!.message).toContain("items:3: the record is 0.38 MB");
    expect(items.map((item) => item.index)).toEqual([0, 1, 2, 3, 4]);
  });

  it("a CSV header row over the cap stops the batch with a clear error", async () => {
    await expect(readFile(`${"c".repeat(500)}\nrow\n`, { format: "csv", maxLineBytes: 100 })).rejects.toMatchObject({ code: "batch_bad_csv", message: expect.stringContaining("items:1: the header row is") });
  });
});
