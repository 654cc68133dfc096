import { execFileSync } from "node:child_process";
import { createReadStream, existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MockOpenAIServer } from "../../src/testing/index.js";
import { batch, batchInProcess, echoSetup, parseLines, readResults, removeTempDirs, spawnBatch, until } from "./batchTestHelpers.js";

let servers: MockOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
  removeTempDirs();
});

// What a process is the point of runs the built CLI (`batch`, `spawnBatch`): standard input, a pipe or a socket as
// --out or stdout, Ctrl-C and the run after it, and the one `logs`. The others run its main() in this process
// (`batchInProcess`): the items, results and messages they check do not depend on being a process of its own.
describe("lllm batch", () => {
  it("runs 500 JSONL items at concurrency 16: every result once, ids intact", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.jsonl");
    const lines: string[] = [];
    for (let index = 1; index <= 500; index += 1) lines.push(index % 3 === 0 ? JSON.stringify({ id: `q-${index}`, input: `question ${index}` }) : JSON.stringify(`question ${index}`));
    writeFileSync(inputs, `${lines.join("\n")}\n`);
    const out = path.join(setup.dir, "results.jsonl");
    const result = await batchInProcess([setup.tactic, "--inputs", inputs, "--out", out, "--concurrency", "16", "--no-log"], setup.env);
    expect(result.stderr).toContain("500 ok, 0 failed");
    expect(result.code, result.stderr).toBe(0);
    const results = readResults(out);
    expect(results).toHaveLength(500);
    const byId = new Map(results.map((line) => [line.id, line]));
    expect(byId.size).toBe(500);
    for (let index = 1; index <= 500; index += 1) {
      const line = byId.get(index % 3 === 0 ? `q-${index}` : String(index));
      expect(line?.status).toBe("ok");
      expect(line?.output).toBe(`echo: question ${index}`);
    }
    expect(results[0]).toMatchObject({ error: null, usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, llm_calls: 1 } });
    // The line a user's scripts read: these keys, in this order.
    expect([Object.keys(results[0]!), Object.keys(results[0]!.usage)]).toEqual([["id", "status", "output", "error", "usage", "cost", "run_id", "duration_ms"], ["prompt_tokens", "completion_tokens", "total_tokens", "llm_calls"]]);
    expect(setup.answered()).toBe(500);
  }, 300_000);

  it("says so when the dataset held no item (an empty file, a CSV header alone), which is no failure", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    for (const [name, text] of [["empty.jsonl", ""], ["header.csv", "input,id\n"]] as const) {
      const inputs = path.join(setup.dir, name);
      writeFileSync(inputs, text);
      const result = await batchInProcess([setup.tactic, "--inputs", inputs, "--no-log"], setup.env);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain("lllm batch: 0 ok, 0 failed");
      expect(result.stderr).toContain("  the dataset held no item: nothing was run\n");
    }
  });

  it("reads CSV (columns become vars, `input` the input) and records each item in the run store with the batch id", async () => {
    const setup = await echoSetup({ prompt: "{input} in {city}" });
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.csv");
    writeFileSync(inputs, 'id,input,city\nparis,"Weather, today",Paris\n,Rain?,"Tokyo"\n');
    const result = await batchInProcess([setup.tactic, "--inputs", inputs, "--ordered"], setup.env);
    expect(result.code, result.stderr).toBe(0);
    const results = parseLines(result.stdout);
    expect(results.map((line) => [line.id, line.output])).toEqual([
      ["paris", "echo: Weather, today in Paris"],
      ["3", "echo: Rain? in Tokyo"],
    ]);
    expect(results.every((line) => typeof line.run_id === "string")).toBe(true);
    const { cli } = await import("../store/storeTestHelpers.js");
    const shown = await cli(setup.home, ["logs", "show", results[0]!.run_id!, "--json"]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ schema_version: 1, id: results[0]!.run_id, batch_id: expect.any(String), status: "ok" });
  }, 120_000);

  it("reads text lines with --lines and keeps input order with --ordered", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.txt");
    writeFileSync(inputs, Array.from({ length: 30 }, (_, index) => `line ${index + 1}`).join("\n"));
    const result = await batchInProcess([setup.tactic, "--inputs", inputs, "--lines", "--ordered", "--concurrency", "8", "--no-log"], setup.env);
    expect(result.code, result.stderr).toBe(0);
    const results = parseLines(result.stdout);
    expect(results.map((line) => line.id)).toEqual(Array.from({ length: 30 }, (_, index) => String(index + 1)));
    expect(results.map((line) => line.output)).toEqual(Array.from({ length: 30 }, (_, index) => `echo: line ${index + 1}`));
  }, 120_000);

  it("reads the dataset from standard input with `--inputs -`", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    const result = await batch([setup.tactic, "--inputs", "-", "--ordered", "--no-log"], setup.env, { input: '"first"\n{"id": "b", "input": "second"}\n' });
    expect(result.code, result.stderr).toBe(0);
    expect(parseLines(result.stdout).map((line) => [line.id, line.output])).toEqual([
      ["1", "echo: first"],
      ["b", "echo: second"],
    ]);
  }, 120_000);

  it("a bad line fails that item only (file:line), the rest run; exit 1 and the summary says where to look", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.jsonl");
    writeFileSync(inputs, '"one"\n{"input": \n"three"\n');
    const out = path.join(setup.dir, "out.jsonl");
    const result = await batchInProcess([setup.tactic, "--inputs", inputs, "--out", out, "--no-log"], setup.env);
    expect(result.code, result.stderr).toBe(1);
    const results = readResults(out);
    expect(results.find((line) => line.id === "2")).toMatchObject({ status: "error", error: { code: "batch_bad_line", message: expect.stringContaining("items.jsonl:2") } });
    expect(results.filter((line) => line.status === "ok").map((line) => line.id).sort()).toEqual(["1", "3"]);
    expect(result.stderr).toContain("2 ok, 1 failed");
    expect(result.stderr).toContain("--retry-failed");
  }, 120_000);

  it("--out a pipe (a FIFO, `>(command)`) gets the results and the batch exits 0: a pipe has nothing to flush to disk", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.txt");
    writeFileSync(inputs, "one\ntwo\n");
    const fifo = path.join(setup.dir, "results.fifo");
    execFileSync("mkfifo", [fifo]);
    // The reader is there before the batch opens the FIFO (which waits for one), and reads until it is closed.
    const read = new Promise<string>((resolve, reject) => {
      let text = "";
      createReadStream(fifo, "utf8").on("data", (chunk) => (text += chunk)).on("end", () => resolve(text)).on("error", reject);
    });
    const result = await batch([setup.tactic, "--inputs", inputs, "--lines", "--out", fifo, "--no-log"], setup.env);
    expect(result.stderr).not.toContain("cannot write the results");
    expect(result.code, result.stderr).toBe(0);
    expect(parseLines(await read).map((line) => line.output).sort()).toEqual(["echo: one", "echo: two"]);
  }, 120_000);

  it("--out - and --out /dev/stdout are standard output (here a socket, which cannot be opened by its name)", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.txt");
    writeFileSync(inputs, "one\ntwo\n");
    for (const out of ["-", "/dev/stdout"]) {
      const result = await batch([setup.tactic, "--inputs", inputs, "--lines", "--out", out, "--no-log"], setup.env, { cwd: setup.dir });
      expect(result.stderr).not.toContain("cannot write the results");
      expect(result.code, result.stderr).toBe(0);
      expect(parseLines(result.stdout).map((line) => line.output).sort()).toEqual(["echo: one", "echo: two"]);
    }
    expect(existsSync(path.join(setup.dir, "-"))).toBe(false);
  }, 120_000);

  it("Ctrl-C lets running items finish (exit 130); the same command again runs only the rest: every item once", async () => {
    const setup = await echoSetup({ delayMs: 150 });
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.txt");
    writeFileSync(inputs, Array.from({ length: 40 }, (_, index) => `q${index + 1}`).join("\n"));
    const out = path.join(setup.dir, "out.jsonl");
    const args = [setup.tactic, "--inputs", inputs, "--lines", "--out", out, "--concurrency", "4", "--no-log"];
    const first = spawnBatch(args, setup.env);
    await until(() => setup.answered() >= 6);
    first.child.kill("SIGINT");
    const stopped = await first.done;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toContain("no new items");
    const partial = readResults(out);
    // The items running at Ctrl-C finished and were written: everything the model answered is in the file.
    expect(partial.length).toBe(setup.answered());
    expect(partial.length).toBeLessThan(40);
    expect(partial.every((line) => line.status === "ok")).toBe(true);

    const answeredBefore = setup.answered();
    const second = await batch(args, setup.env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain(`${partial.length} skipped`);
    const all = readResults(out);
    expect(all.map((line) => line.id).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 40 }, (_, index) => String(index + 1)));
    // Items already done were not sent to the model again.
    expect(setup.answered() - answeredBefore).toBe(40 - partial.length);
  }, 180_000);

  it("--retry-failed runs the failed items again and keeps each id once in --out", async () => {
    const setup = await echoSetup({ prompt: "{input} {city}" });
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.jsonl");
    writeFileSync(inputs, '{"input": "a", "vars": {"city": "Oslo"}}\n"b"\n');
    const out = path.join(setup.dir, "out.jsonl");
    const first = await batchInProcess([setup.tactic, "--inputs", inputs, "--out", out, "--no-log"], setup.env);
    expect(first.code, first.stderr).toBe(1);
    expect(readResults(out).find((line) => line.id === "2")?.error?.code).toBe("template_missing_variable");
    const again = await batchInProcess([setup.tactic, "--inputs", inputs, "--out", out, "--no-log"], setup.env);
    expect(again.code, again.stderr).toBe(1); // the failure is still there, and not run again without --retry-failed
    expect(setup.answered()).toBe(1);
    const retried = await batchInProcess([setup.tactic, "--inputs", inputs, "--out", out, "--retry-failed", "--var", "city=Rome", "--no-log"], setup.env);
    expect(retried.code, retried.stderr).toBe(0);
    const results = readResults(out);
    expect(results.map((line) => [line.id, line.output])).toEqual([
      ["1", "echo: a Oslo"],
      ["2", "echo: b Rome"],
    ]);
  }, 120_000);

  it("--max-cost stops starting items once reached: exit 3, and a rerun with a higher limit goes on", async () => {
    // 100,000 prompt tokens of gpt-4o-mini per item: $0.015 each.
    const setup = await echoSetup({ usage: { prompt_tokens: 100_000, completion_tokens: 0 } });
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.txt");
    writeFileSync(inputs, Array.from({ length: 10 }, (_, index) => `q${index + 1}`).join("\n"));
    const out = path.join(setup.dir, "out.jsonl");
    const result = await batchInProcess([setup.tactic, "--inputs", inputs, "--lines", "--out", out, "--concurrency", "1", "--max-cost", "0.05", "--no-log"], setup.env);
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain("--max-cost 0.05 reached");
    expect(readResults(out)).toHaveLength(4);
    expect(setup.answered()).toBe(4);
    const more = await batchInProcess([setup.tactic, "--inputs", inputs, "--lines", "--out", out, "--concurrency", "1", "--max-cost", "1", "--no-log"], setup.env);
    expect(more.code, more.stderr).toBe(0);
    expect(readResults(out)).toHaveLength(10);
    expect(setup.answered()).toBe(10);
  }, 120_000);

  it("a 429 storm with retry-after: the batch backs off, pauses, and finishes every item", async () => {
    const setup = await echoSetup({ delayMs: 30, server: { failures: Array.from({ length: 20 }, () => ({ status: 429, retryAfterMs: 100 })) } });
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.txt");
    writeFileSync(inputs, Array.from({ length: 100 }, (_, index) => `q${index + 1}`).join("\n"));
    const out = path.join(setup.dir, "out.jsonl");
    const result = await batchInProcess([setup.tactic, "--inputs", inputs, "--lines", "--out", out, "--concurrency", "16", "--no-log"], setup.env);
    expect(result.code, result.stderr).toBe(0);
    const results = readResults(out);
    expect(new Set(results.map((line) => line.id)).size).toBe(100);
    expect(results.every((line) => line.status === "ok")).toBe(true);
    expect(setup.server.requests.filter((request) => request.path === "/v1/chat/completions")).toHaveLength(120);
    // After the storm the batch runs fewer items at once than --concurrency (halved, then grown back by one per
    // round of successes); without the back-off the second half would run 16 at once.
    expect(Math.max(...setup.concurrent.slice(50))).toBeLessThan(16);
  }, 240_000);

  it("bad flags are usage errors (exit 2) that name the flag", async () => {
    const setup = await echoSetup();
    servers.push(setup.server);
    const missing = await batchInProcess([setup.tactic, "--inputs", path.join(setup.dir, "nope.jsonl")], setup.env);
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain("does not exist");
    const inputs = path.join(setup.dir, "items.txt");
    writeFileSync(inputs, "a\n");
    const bad = await batchInProcess([setup.tactic, "--inputs", inputs, "--concurrency", "0"], setup.env);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toContain("--concurrency must be a whole number");
    const noKey = await batchInProcess([setup.tactic, "--inputs", inputs], { ...setup.env, MOCK_KEY: "" });
    expect(noKey.code, noKey.stderr).toBe(2);
    expect(noKey.stdout).toBe("");
  }, 120_000);
});
