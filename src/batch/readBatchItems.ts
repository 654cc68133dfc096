import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { ConfigError } from "../errors.js";
import type { BatchItem } from "./BatchItem.js";

export type DatasetFormat = "jsonl" | "csv" | "lines";

export interface ReadBatchItemsOptions {
  /** A file path, or `-` for standard input. */
  file: string;
  format: DatasetFormat;
  /** What the problems name: the file as the user gave it. */
  label?: string;
}

/**
 * Read a dataset as a stream of items, one at a time: the caller pulls the next item only when it can start it, so
 * memory stays flat however long the file is. A line that cannot be read (bad JSON, a wrong shape) becomes an item
 * with a `problem` (reported as failed, with file:line) instead of stopping the batch.
 */
export async function* readBatchItems(options: ReadBatchItemsOptions): AsyncGenerator<BatchItem> {
  const stream: Readable = options.file === "-" ? process.stdin : createReadStream(options.file);
  const label = options.label ?? options.file;
  if (options.format === "csv") {
    yield* csvItems(stream, label);
    return;
  }
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let lineNumber = 0;
  let index = 0;
  for await (const raw of lines) {
    lineNumber += 1;
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") continue;
    if (options.format === "lines") {
      yield { id: String(lineNumber), index: index++, input: line, vars: {} };
      continue;
    }
    yield jsonlItem(line, lineNumber, index++, label);
  }
}

function jsonlItem(line: string, lineNumber: number, index: number, label: string): BatchItem {
  const fallback = { id: String(lineNumber), index, input: null, vars: {} };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { ...fallback, problem: { code: "batch_bad_line", message: `${label}:${lineNumber}: not JSON (${(error as Error).message}); a line is a JSON string or an object {"input": …, "vars": {…}, "id": …}` } };
  }
  if (typeof value === "string") return { ...fallback, input: value };
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ...fallback, problem: { code: "batch_bad_line", message: `${label}:${lineNumber}: a line must be a JSON string or an object {"input": …, "vars": {…}, "id": …}` } };
  }
  const record = value as Record<string, unknown>;
  const id = typeof record.id === "string" || typeof record.id === "number" ? String(record.id) : fallback.id;
  const vars: Record<string, string> = {};
  if (record.vars !== undefined) {
    if (typeof record.vars !== "object" || record.vars === null || Array.isArray(record.vars)) {
      return { ...fallback, id, problem: { code: "batch_bad_line", message: `${label}:${lineNumber}: \`vars\` must be an object of strings` } };
    }
    for (const [key, entry] of Object.entries(record.vars)) vars[key] = typeof entry === "string" ? entry : JSON.stringify(entry);
  }
  if (!("input" in record)) return { ...fallback, id, vars, problem: { code: "batch_bad_line", message: `${label}:${lineNumber}: the object has no \`input\`` } };
  return { id, index, input: record.input, vars };
}

/** CSV with a header row: `input` is the input, `id` the id, every other column a var. */
async function* csvItems(stream: Readable, label: string): AsyncGenerator<BatchItem> {
  const { parse } = await import("csv-parse");
  const parser = stream.pipe(parse({ columns: true, bom: true, skip_empty_lines: true, relax_column_count: false, info: true }));
  let index = 0;
  try {
    for await (const row of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      const { record, info } = row;
      const { input, id, ...vars } = record;
      const lineNumber = info.lines;
      if (input === undefined) throw new ConfigError("batch_no_input_column", `${label}: the CSV has no \`input\` column`, { location: { file: label, line: 1 }, hint: "The header row names the columns: `input`, optionally `id`, and one column per var." });
      yield { id: id !== undefined && id !== "" ? id : String(lineNumber), index: index++, input, vars };
    }
  } catch (error) {
    // A broken CSV (an unclosed quote, a row with too many columns) cannot be resynchronised: stop with its place.
    if (error instanceof ConfigError) throw error;
    throw new ConfigError("batch_bad_csv", `${label}: ${(error as Error).message}`, { location: { file: label } });
  }
}
