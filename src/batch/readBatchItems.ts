import { constants } from "node:buffer";
import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import { ConfigError } from "../errors.js";
import { escapeControlCharacters } from "../util/escapeControlCharacters.js";
import type { BatchItem } from "./BatchItem.js";
import { capCsvRecords, type OversizedRecord } from "./capCsvRecords.js";
import { readLines } from "./readLines.js";

export type DatasetFormat = "jsonl" | "csv" | "lines";

/**
 * The longest line (CSV: record) a dataset may have, unless `--max-line-size` says otherwise: 64 MB, sixteen times
 * the text of the largest context windows (1M tokens is about 4 MB), while a line of hundreds of MB would stop the
 * batch (V8's longest string) or, a few items at once, its memory.
 */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

/** The longest line that can be read at all: V8's longest string (about 512 MB). */
export const MAX_LINE_BYTES = constants.MAX_STRING_LENGTH;

export interface ReadBatchItemsOptions {
  /** A file path, or `-` for standard input. */
  file: string;
  format: DatasetFormat;
  /** What the problems name: the file as the user gave it. */
  label?: string;
  /** A longer line is not kept: its item fails (`batch_line_too_long`). Default `DEFAULT_MAX_LINE_BYTES`. */
  maxLineBytes?: number;
}

/**
 * Read a dataset as a stream of items, one at a time: the caller pulls the next item only when it can start it, so
 * memory stays flat however long the file is. A line that cannot be read (bad JSON, a wrong shape, too long) becomes
 * an item with a `problem` (reported as failed, with file:line) instead of stopping the batch. The file is read once,
 * front to back: a pipe or a FIFO (`<(command)`) works as well as a file.
 */
export async function* readBatchItems(options: ReadBatchItemsOptions): AsyncGenerator<BatchItem> {
  const label = options.label ?? (options.file === "-" ? "stdin" : options.file);
  const stream = readBytes(options.file === "-" ? process.stdin : createReadStream(options.file), label);
  const maxBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  if (options.format === "csv") {
    yield* csvItems(stream, label, maxBytes);
    return;
  }
  let index = 0;
  for await (const lines of readLines(stream, maxBytes)) {
    for (const line of lines) {
      const { lineNumber } = line;
      if (line.text === undefined) {
        yield oversizedItem({ lineNumber, bytes: line.bytes }, index++, label, maxBytes, "line");
        continue;
      }
      if (line.text.trim() === "") continue;
      if (options.format === "lines") {
        yield { id: String(lineNumber), index: index++, input: line.text, vars: {} };
        continue;
      }
      yield jsonlItem(line.text, lineNumber, index++, label);
    }
  }
}

/** The bytes of the dataset; a file that cannot be opened or read (ENXIO, EACCES, EIO) is an error that names it. */
async function* readBytes(stream: Readable, label: string): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) yield chunk;
  } catch (error) {
    throw new ConfigError("usage_inputs", `cannot read the dataset ${label}: ${(error as Error).message}`, { location: { file: "--inputs" }, cause: error });
  }
}

/** An item whose line was too long to read: it fails with its own result line, and the batch goes on. */
function oversizedItem(record: { lineNumber: number; bytes: number }, index: number, label: string, maxBytes: number, what: "line" | "record"): BatchItem {
  const raise = record.bytes <= MAX_LINE_BYTES ? `--max-line-size raises the limit, e.g. --max-line-size ${Math.ceil(record.bytes / 1024 / 1024)}M` : `no line over ${formatMegabytes(MAX_LINE_BYTES)} can be read: shorten it`;
  const message = `${label}:${record.lineNumber}: the ${what} is ${formatMegabytes(record.bytes)}, over the limit of ${formatMegabytes(maxBytes)} a ${what} may have${what === "record" ? " (or a quote is not closed)" : ""}; it is not run (${raise})`;
  return { id: String(record.lineNumber), index, input: null, vars: {}, problem: { code: "batch_line_too_long", message } };
}

function formatMegabytes(bytes: number): string {
  const megabytes = bytes / 1024 / 1024;
  return `${megabytes >= 10 ? Math.round(megabytes) : Number(megabytes.toPrecision(2))} MB`;
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
async function* csvItems(stream: AsyncIterable<Buffer>, label: string, maxBytes: number): AsyncGenerator<BatchItem> {
  const { parse } = await import("csv-parse");
  const { Readable } = await import("node:stream");
  // Records over the cap never reach csv-parse; their items are given out in file order among the parsed rows.
  const oversized: OversizedRecord[] = [];
  const records = capCsvRecords(stream, maxBytes, (record) => {
    if (record.first) throw new ConfigError("batch_bad_csv", `${label}:${record.lineNumber}: the header row is ${formatMegabytes(record.bytes)}, over the limit of ${formatMegabytes(maxBytes)} a record may have (or a quote is not closed)`, { location: { file: label, line: record.lineNumber } });
    oversized.push(record);
  });
  const source = Readable.from(records, { objectMode: false });
  // Both line endings, whichever comes first: csv-parse otherwise takes the first one it meets for the whole file, and
  // a CRLF file with a row appended by `echo >>` (or the reverse) had a `\r` or `\n` at the end of its last column.
  // A column named twice would silently keep its last value (an `input` column twice: the wrong input for every item).
  const columns = (header: string[]): string[] => {
    const twice = header.find((name, position) => header.indexOf(name) !== position);
    if (twice !== undefined) throw new ConfigError("batch_bad_csv", `${label}:1: the header row names the column \`${escapeControlCharacters(twice, { all: true })}\` twice`, { location: { file: label, line: 1 }, hint: "Give each column its own name: `input`, optionally `id`, and one column per var." });
    // Checked on the header, not on the first row: a CSV of a header alone would otherwise pass as a batch of nothing.
    if (!header.includes("input")) throw noInputColumn(label);
    return header;
  };
  // A row with more or fewer values than the header is parsed all the same (`info.error` says so): its item fails,
  // the others run (it stopped the whole batch, at every run again, before the rows after it).
  const parser = parse({ columns, bom: true, skip_empty_lines: true, relax_column_count: true, info: true, record_delimiter: ["\r\n", "\n"] });
  source.on("error", (error) => parser.destroy(error));
  source.pipe(parser);
  let index = 0;
  try {
    for await (const row of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number; error?: Error } }>) {
      const { record, info } = row;
      const { input, id, ...vars } = record;
      const lineNumber = info.lines;
      while (oversized.length > 0 && oversized[0]!.lineNumber < lineNumber) yield oversizedItem(oversized.shift()!, index++, label, maxBytes, "record");
      if (info.error !== undefined) {
        yield { id: String(lineNumber), index: index++, input: null, vars: {}, problem: { code: "batch_bad_line", message: `${label}:${lineNumber}: ${columnCountProblem(info.error)}` } };
        continue;
      }
      if (input === undefined) throw noInputColumn(label);
      yield { id: id !== undefined && id !== "" ? id : String(lineNumber), index: index++, input, vars };
    }
    for (const record of oversized.splice(0)) yield oversizedItem(record, index++, label, maxBytes, "record");
  } catch (error) {
    // A broken CSV (a quote not closed) cannot be resynchronised: stop with its place.
    if (error instanceof ConfigError) throw error;
    throw new ConfigError("batch_bad_csv", `${label}: ${(error as Error).message}`, {
      location: { file: label },
      hint: "Check the quotes there: a value that holds a comma, a quote or a line break is quoted (\"…\"), and a quote inside it doubled (\"\").",
    });
  } finally {
    source.destroy();
  }
}

/** A row of another length than the header, said with the numbers of csv-parse's error (its text otherwise). */
function columnCountProblem(error: Error): string {
  const counts = /columns length is (\d+), got (\d+)/.exec(error.message);
  if (!counts) return error.message;
  return `the row has ${counts[2]} value${counts[2] === "1" ? "" : "s"}, the header ${counts[1]} columns; it is not run (a value that holds a comma is quoted: "a, b")`;
}

function noInputColumn(label: string): ConfigError {
  return new ConfigError("batch_no_input_column", `${label}: the CSV has no \`input\` column`, { location: { file: label, line: 1 }, hint: "The header row names the columns: `input`, optionally `id`, and one column per var." });
}
