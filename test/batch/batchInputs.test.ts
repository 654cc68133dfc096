import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import { createWriteStream, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MockOpenAIServer } from "../../src/testing/index.js";
import { BIN, ROOT, type CliResult } from "../helpers/runCli.js";
import { batch, batchInProcess, echoSetup, parseLines, readResults, removeTempDirs } from "./batchTestHelpers.js";

let servers: MockOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
  removeTempDirs();
});

/** `lllm batch ARGS` run by bash, so that an argument can be a process substitution such as `<(printf ...)`. */
function bashBatch(args: string, env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", `exec "${process.execPath}" "${BIN}" batch ${args}`], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_CODE_CACHE: process.env.LLLM_CODE_CACHE, NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const questions = (count: number): string => Array.from({ length: count }, (_, index) => `q${index + 1}`).join("\n");
const expectedIds = (count: number): string[] => Array.from({ length: count }, (_, index) => String(index + 1));

// Datasets that are pipes, FIFOs or standard input are read by the built CLI (`bashBatch`, `batch`): another process
// writes them. The other cases run its main() in this process (`batchInProcess`): they do not depend on being a
// process of its own.
describe("lllm batch --inputs that is not a regular file", () => {
  it("reads a process substitution `<(command)` (a FIFO) once, as a stream: every item, no error about a folder", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    const source = path.join(setup.dir, "source.txt");
    writeFileSync(source, questions(300));
    const out = path.join(setup.dir, "out.jsonl");
    const result = await bashBatch(`"${setup.tactic}" --inputs <(cat "${source}") --lines --out "${out}" --concurrency 8 --no-log`, setup.env);
    expect(result.stderr).not.toContain("folder");
    expect(result.code, result.stderr).toBe(0);
    // Counting the lines first would have read part of the pipe: every line reaches the items only when it is read once.
    expect(readResults(out).map((line) => line.id).sort((a, b) => Number(a) - Number(b))).toEqual(expectedIds(300));
    expect(result.stderr).toContain("300 ok, 0 failed");
  }, 180_000);

  it("reads a named FIFO, and /dev/stdin", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    const fifo = path.join(setup.dir, "items.fifo");
    execFileSync("mkfifo", [fifo]);
    // The writer opens the FIFO once the reader does; both ends meet in the CLI's own read.
    const writer = createWriteStream(fifo);
    writer.end(`"from a fifo"\n{"id": "x", "input": "second"}\n`);
    const fromFifo = await batch([setup.tactic, "--inputs", fifo, "--ordered", "--no-log"], setup.env);
    expect(fromFifo.code, fromFifo.stderr).toBe(0);
    expect(parseLines(fromFifo.stdout).map((line) => [line.id, line.output])).toEqual([
      ["1", "echo: from a fifo"],
      ["x", "echo: second"],
    ]);
    const fromStdin = await batch([setup.tactic, "--inputs", "/dev/stdin", "--lines", "--ordered", "--no-log"], setup.env, { input: "alpha\nbeta\n" });
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(parseLines(fromStdin.stdout).map((line) => line.output)).toEqual(["echo: alpha", "echo: beta"]);
  }, 120_000);

  it("a folder is still refused, and so is a folder as --out; a file that cannot be opened is a clear error", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    const folder = await batchInProcess([setup.tactic, "--inputs", setup.dir], setup.env);
    expect(folder.code, folder.stderr).toBe(2);
    expect(folder.stderr).toContain("is a folder, not a file");
    const inputs = path.join(setup.dir, "items.txt");
    writeFileSync(inputs, "a\n");
    const out = await batchInProcess([setup.tactic, "--inputs", inputs, "--lines", "--out", setup.dir], setup.env);
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toContain("--out");
    expect(out.stderr).toContain("is a folder");
    // A Unix socket exists but cannot be opened (ENXIO).
    const socket = path.join(setup.dir, "items.sock");
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      const unreadable = await batchInProcess([setup.tactic, "--inputs", socket, "--lines"], setup.env);
      expect(unreadable.code, unreadable.stderr).toBe(2);
      expect(unreadable.stderr).toContain(`cannot read the dataset ${socket}: ENXIO`);
      expect(unreadable.stderr).not.toContain("internal error");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(setup.answered()).toBe(0);
  }, 120_000);
});

describe("lllm batch: lines too long to read", () => {
  it("a line longer than Node's longest string (600 MB, piped) fails that item only; the items around it run", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    // Made by the shell, streamed through a pipe: nothing of it is held in this process or written to disk.
    const result = await bashBatch(`"${setup.tactic}" --inputs - --ordered --no-log < <(echo '"first"'; head -c 600000000 /dev/zero | tr '\\0' x; echo; echo '"last"')`, setup.env);
    expect(result.stderr).not.toContain("RangeError");
    const lines = parseLines(result.stdout);
    expect(lines.map((line) => [line.id, line.status, line.output])).toEqual([
      ["1", "ok", "echo: first"],
      ["2", "error", null],
      ["3", "ok", "echo: last"],
    ]);
    expect(lines[1]!.error).toEqual({ code: "batch_line_too_long", message: "stdin:2: the line is 572 MB, over the limit of 64 MB a line may have; it is not run (no line over 512 MB can be read: shorten it)" });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("2 ok, 1 failed");
  }, 240_000);

  it("--max-line-size sets the cap: a longer JSONL line fails its item with a result line, and the batch goes on", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.jsonl");
    writeFileSync(inputs, `"small"\n${JSON.stringify({ id: "huge", input: "h".repeat(3 * 1024 * 1024) })}\n"after"\n`);
    const out = path.join(setup.dir, "out.jsonl");
    const result = await batchInProcess([setup.tactic, "--inputs", inputs, "--out", out, "--max-line-size", "1M", "--no-log"], setup.env);
    expect(result.code, result.stderr).toBe(1);
    const byId = new Map(readResults(out).map((line) => [line.id, line]));
    expect([...byId.keys()].sort()).toEqual(["1", "2", "3"]);
    expect(byId.get("2")!.error).toEqual({ code: "batch_line_too_long", message: `${inputs}:2: the line is 3 MB, over the limit of 1 MB a line may have; it is not run (--max-line-size raises the limit, e.g. --max-line-size 4M)` });
    expect(setup.answered()).toBe(2);
    const bad = await batchInProcess([setup.tactic, "--inputs", inputs, "--max-line-size", "lots"], setup.env);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toContain("--max-line-size must be a size such as 64M");
  }, 120_000);
});

describe("lllm batch: duplicate ids", () => {
  it("a later item with an id already used is not run nor written; one warning names the count and the first ids; exit 1, and again on a rerun", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.jsonl");
    const ids = ["a", "b", "a", "c", "b", "d", "a"];
    writeFileSync(inputs, ids.map((id, index) => JSON.stringify({ id, input: `q${index + 1}` })).join("\n"));
    const out = path.join(setup.dir, "out.jsonl");
    const args = [setup.tactic, "--inputs", inputs, "--out", out, "--ordered", "--no-log"];
    const first = await batchInProcess(args, setup.env);
    expect(first.code, first.stderr).toBe(1);
    // --ordered does not wait for the items left out: the lines after them are written.
    expect(readResults(out).map((line) => [line.id, line.output])).toEqual([
      ["a", "echo: q1"],
      ["b", "echo: q2"],
      ["c", "echo: q4"],
      ["d", "echo: q6"],
    ]);
    const warnings = first.stderr.split("\n").filter((line) => line.includes("warning"));
    expect(warnings).toEqual(['lllm: warning: 3 items were not run: their ids are already used by an earlier item of the dataset (`a`, `b`). Results and resume go by id: give each item its own "id" (or none: its line number is used).']);
    expect(first.stderr).toContain("4 ok, 0 failed, 3 not run (duplicate ids)");
    expect(setup.answered()).toBe(4);

    const again = await batchInProcess(args, setup.env);
    expect(again.code, again.stderr).toBe(1);
    expect(again.stderr).toContain("4 skipped (already in");
    expect(again.stderr).toContain("3 not run (duplicate ids)");
    expect(readResults(out)).toHaveLength(4);
    expect(setup.answered()).toBe(4);
  }, 120_000);
});
