import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BatchOutput } from "../../src/batch/BatchOutput.js";
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

  it("--retry-failed drops the failed lines, so that each id stays once in the file", async () => {
    const file = path.join(tempDir(), "out.jsonl");
    writeFileSync(file, `${line("1", "ok")}\n${line("2", "error")}\n`);
    const output = await BatchOutput.open({ file, ordered: false, retryFailed: true });
    output.close();
    expect([...output.done.keys()]).toEqual(["1"]);
    expect(readFileSync(file, "utf8")).toBe(`${line("1", "ok")}\n`);
  });
});
