import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BatchOutput } from "../../src/batch/BatchOutput.js";
import { ConfigError } from "../../src/errors.js";
import { removeTempDirs, tempDir } from "./batchTestHelpers.js";

afterEach(() => removeTempDirs());

const line = (id: string, status: "ok" | "error"): string => JSON.stringify({ id, status, output: status === "ok" ? "x" : null, error: status === "ok" ? null : { code: "e", message: "m" }, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, llm_calls: 0 }, cost: null, run_id: null, duration_ms: 0 });

describe("BatchOutput", () => {
  it("cuts off a torn last line (a crash mid-write) and reads the ids already done", async () => {
    const file = path.join(tempDir(), "out.jsonl");
    writeFileSync(file, `${line("1", "ok")}\n${line("2", "error")}\n{"id": "3", "sta`);
    const output = await BatchOutput.open({ file, ordered: false, retryFailed: false });
    expect([...output.done]).toEqual([
      ["1", "ok"],
      ["2", "error"],
    ]);
    output.write(2, { id: "3", status: "ok", output: "y", error: null, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, llmCalls: 0 }, cost: null, runId: null, durationMs: 1 });
    output.close();
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean).map((text) => JSON.parse(text) as { id: string });
    expect(lines.map((entry) => entry.id)).toEqual(["1", "2", "3"]);
  });

  it("refuses a file that is not a results file (a line lllm did not write), and leaves it as it was, torn-looking last line or not", async () => {
    const dir = tempDir();
    const cases = {
      "notes.md": "# Notes\nthe last line, without a newline",
      "config.json": '{"name": "x", "value": 1}',
      "items.jsonl": `${line("1", "ok")}\n{"input": "a dataset line"}\n{"id": "3", "input": "no newline"}`,
      "retry.jsonl": `${line("1", "error")}\nnot a result\n`,
    };
    for (const [name, text] of Object.entries(cases)) {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      const opening = BatchOutput.open({ file, ordered: false, retryFailed: name === "retry.jsonl" });
      await expect(opening).rejects.toThrow(ConfigError);
      await expect(opening).rejects.toMatchObject({ message: expect.stringMatching(/^--out is not a results file/), problems: [{ location: { file, line: expect.any(Number) } }] });
      expect(readFileSync(file, "utf8")).toBe(text);
    }
    // Empty lines are no trouble.
    const spaced = path.join(dir, "spaced.jsonl");
    writeFileSync(spaced, `\n${line("1", "ok")}\n\n`);
    const output = await BatchOutput.open({ file: spaced, ordered: false, retryFailed: false });
    output.close();
    expect([...output.done.keys()]).toEqual(["1"]);
  });

  it("writes the characters a terminal acts on that JSON leaves raw (C1 controls, bidi overrides) as escapes: the same data", async () => {
    const file = path.join(tempDir(), "out.jsonl");
    const answer = "ok \u009b2J \u202egnp.exe \u2028 \u007f";
    const output = await BatchOutput.open({ file, ordered: false, retryFailed: false });
    output.write(0, { id: "1", status: "ok", output: answer, error: null, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, llmCalls: 0 }, cost: null, runId: null, durationMs: 1 });
    output.close();
    const text = readFileSync(file, "utf8");
    expect(text).not.toMatch(/[\u007f-\u009f\u2028\u202e]/);
    expect(text).toContain("\\u009b2J \\u202egnp.exe \\u2028 \\u007f");
    expect((JSON.parse(text) as { output: string }).output).toBe(answer);
  });

  it("--retry-failed drops the failed lines, so that each id stays once in the file", async () => {
    const file = path.join(tempDir(), "out.jsonl");
    writeFileSync(file, `${line("1", "ok")}\n${line("2", "error")}\n`);
    const output = await BatchOutput.open({ file, ordered: false, retryFailed: true });
    output.close();
    expect([...output.done.keys()]).toEqual(["1"]);
    expect(readFileSync(file, "utf8")).toBe(`${line("1", "ok")}\n`);
  });

  it("reads what the results already in the file spent (the budgets count it); lines --retry-failed drops no longer count", async () => {
    const file = path.join(tempDir(), "out.jsonl");
    const spending = (id: string, status: "ok" | "error", cost: unknown, prompt: unknown): string => JSON.stringify({ id, status, output: null, error: null, usage: { prompt_tokens: prompt, completion_tokens: 5, total_tokens: 0, llm_calls: 1 }, cost, run_id: null, duration_ms: 0 });
    writeFileSync(file, [spending("1", "ok", 0.25, 100), spending("2", "error", 0.5, 200), spending("3", "ok", null, 300), spending("4", "ok", "lots", "many")].join("\n") + "\n");
    const read = await BatchOutput.open({ file, ordered: false, retryFailed: false });
    read.close();
    expect(read.spent).toEqual({ promptTokens: 600, completionTokens: 20, cost: 0.75 });
    const retried = await BatchOutput.open({ file, ordered: false, retryFailed: true });
    retried.close();
    expect(retried.spent).toEqual({ promptTokens: 400, completionTokens: 15, cost: 0.25 });
  });
});
