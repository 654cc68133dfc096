// Reading a batch's dataset: lllm's capped line reader against readline (what it replaced), and csv-parse behind
// the record cap against csv-parse alone, on the same files in the same process, interleaved. CPU time (user +
// system) of each read, median of `runs`; ratios are printed, never asserted.
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { Readable } from "node:stream";

export async function batchReaderSuite({ runs }) {
  const { readLines } = await import("../dist/batch/readLines.js");
  const { capCsvRecords } = await import("../dist/batch/capCsvRecords.js");
  const { parse } = await import("csv-parse");
  const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-bench-reader-"));
  try {
    const jsonl = path.join(dir, "items.jsonl");
    const csv = path.join(dir, "items.csv");
    const lines = 500_000;
    const rows = 200_000;
    writeFileSync(jsonl, Array.from({ length: lines }, (_, index) => JSON.stringify({ id: `q${index}`, input: `question number ${index} about something fairly ordinary` })).join("\n") + "\n");
    writeFileSync(csv, ["id,input,city", ...Array.from({ length: rows }, (_, index) => `q${index},"question ${index}, with a comma",Paris`)].join("\n") + "\n");
    const cap = 64 * 1024 * 1024;
    const cases = [
      ["readline (baseline)", async () => { let count = 0; for await (const _ of createInterface({ input: createReadStream(jsonl), crlfDelay: Infinity })) count += 1; return count; }],
      ["readLines (capped)", async () => { let count = 0; for await (const batch of readLines(createReadStream(jsonl), cap)) count += batch.length; return count; }],
      ["csv-parse (baseline)", async () => { let count = 0; for await (const _ of createReadStream(csv).pipe(parse({ columns: true, info: true }))) count += 1; return count; }],
      ["capCsvRecords + csv-parse", async () => { let count = 0; for await (const _ of Readable.from(capCsvRecords(createReadStream(csv), cap, () => undefined), { objectMode: false }).pipe(parse({ columns: true, info: true }))) count += 1; return count; }],
    ];
    const samples = cases.map(() => []);
    for (let run = 0; run < runs + 1; run += 1) {
      for (const [index, [, read]] of cases.entries()) {
        const before = process.cpuUsage();
        await read();
        const used = process.cpuUsage(before);
        if (run > 0) samples[index].push((used.user + used.system) / 1000);
      }
    }
    const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    console.log(`\nDataset reading (CPU ms, median of ${runs}; ${lines.toLocaleString("en")} JSONL lines, ${rows.toLocaleString("en")} CSV rows)`);
    for (const [index, [name]] of cases.entries()) {
      const base = median(samples[index < 2 ? 0 : 2]);
      const value = median(samples[index]);
      console.log(`  ${name.padEnd(34)} ${value.toFixed(0).padStart(8)} ms   ${(value / base).toFixed(2)}x baseline`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
