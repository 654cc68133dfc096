import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MockOpenAIServer } from "../../src/testing/index.js";
import { runCli } from "../helpers/runCli.js";
import { batch, batchInProcess, echoSetup, readResults, removeTempDirs } from "./batchTestHelpers.js";

let servers: MockOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
  removeTempDirs();
});

const questions = (count: number): string => Array.from({ length: count }, (_, index) => `q${index + 1}`).join("\n");

// The first batch and `batch --help` run the built CLI, end to end; the others run its main() in this process
// (`batchInProcess`): the budgets and their messages do not depend on being a process of its own.
describe("lllm batch budgets across resumed runs", () => {
  it("--max-cost counts what the results already in --out spent: the same command again starts nothing", async () => {
    // 100,000 prompt tokens of gpt-4o-mini per item: $0.015 each.
    const setup = await echoSetup({ usage: { prompt_tokens: 100_000, completion_tokens: 0 } });
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.txt");
    writeFileSync(inputs, questions(10));
    const out = path.join(setup.dir, "out.jsonl");
    const args = [setup.tactic, "--inputs", inputs, "--lines", "--out", out, "--concurrency", "1", "--max-cost", "0.02", "--no-log"];
    const first = await batch(args, setup.env);
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toContain("--max-cost 0.02 reached: $0.030 spent");
    expect(setup.answered()).toBe(2);
    // Run again as the hint says, without raising the limit: nothing more is spent, however often.
    for (let run = 0; run < 3; run += 1) {
      const again = await batchInProcess(args, setup.env);
      expect(again.code, again.stderr).toBe(3);
      expect(again.stderr).toContain(`--max-cost 0.02 reached: the results already in ${out} spent $0.030`);
      expect(again.stderr).toContain("2 skipped");
    }
    expect(setup.answered()).toBe(2);
    const spent = readResults(out).reduce((sum, line) => sum + (line.cost ?? 0), 0);
    expect(spent).toBeCloseTo(0.03, 10);

    // A higher limit goes on from there: $0.030 already spent, so two more items reach $0.06.
    const raised = await batchInProcess([...args.slice(0, -3), "--max-cost", "0.06", "--no-log"], setup.env);
    expect(raised.code, raised.stderr).toBe(3);
    expect(raised.stderr).toContain("--max-cost 0.06 reached: $0.060 spent, $0.030 of it by the results already in");
    expect(setup.answered()).toBe(4);
    const help = await runCli(["batch", "--help"], { env: setup.env });
    expect(help.stdout.replace(/\s+/g, " ")).toContain("--max-cost <usd> stop starting items once this many US dollars are spent, counting the results already in --out (exit 3)");
  }, 180_000);

  it("--max-tokens counts the tokens of the results already in --out too", async () => {
    const setup = await echoSetup({ usage: { prompt_tokens: 100_000, completion_tokens: 0 } });
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.txt");
    writeFileSync(inputs, questions(10));
    const out = path.join(setup.dir, "out.jsonl");
    const args = [setup.tactic, "--inputs", inputs, "--lines", "--out", out, "--concurrency", "1", "--max-tokens", "150000", "--no-log"];
    expect((await batchInProcess(args, setup.env)).code).toBe(3);
    expect(setup.answered()).toBe(2);
    const again = await batchInProcess(args, setup.env);
    expect(again.code, again.stderr).toBe(3);
    expect(again.stderr).toContain(`--max-tokens 150000 reached: the results already in ${out} used 200,000 tokens`);
    expect(setup.answered()).toBe(2);
  }, 120_000);

  it("a budget reached by the very last item stopped nothing: exit 0, and a rerun with every item done exits 0 too", async () => {
    const setup = await echoSetup({ usage: { prompt_tokens: 100_000, completion_tokens: 0 } });
    servers.push(setup.server);
    const inputs = path.join(setup.dir, "items.txt");
    writeFileSync(inputs, questions(3));
    const out = path.join(setup.dir, "out.jsonl");
    const args = [setup.tactic, "--inputs", inputs, "--lines", "--out", out, "--concurrency", "1", "--max-tokens", "300000", "--no-log"];
    const first = await batchInProcess(args, setup.env);
    expect(first.stderr).toContain("3 ok, 0 failed");
    expect(first.code, first.stderr).toBe(0);
    const again = await batchInProcess(args, setup.env);
    expect(again.stderr).toContain("3 skipped");
    expect(again.code, again.stderr).toBe(0);
    expect(setup.answered()).toBe(3);
  }, 120_000);
});

describe("lllm batch --max-cost and models without a price", () => {
  it("refuses to start (exit 2) when a model has no known price, naming the `prices` setting; with the price set it runs and counts", async () => {
    const setup = await echoSetup({ usage: { prompt_tokens: 1_000_000, completion_tokens: 0 } });
    servers.push(setup.server);
    const tactic = path.join(setup.dir, "local.yaml");
    writeFileSync(tactic, readFileSync(setup.tactic, "utf8").replace("model_name: gpt-4o-mini", "model_name: local-llama"));
    const inputs = path.join(setup.dir, "items.txt");
    writeFileSync(inputs, questions(40));
    const out = path.join(setup.dir, "out.jsonl");
    const args = [tactic, "--inputs", inputs, "--lines", "--out", out, "--concurrency", "1", "--max-cost", "1", "--no-log"];
    const refused = await batchInProcess(args, setup.env, { cwd: setup.dir });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain("--max-cost cannot hold: the model `local-llama` (agent `bot`) has no known price");
    expect(refused.stderr).toContain('under `prices:` in the project settings (.lllmrc.yaml), e.g. `prices: {"local-llama": {input: 0.15, output: 0.6}}`');
    expect(setup.answered()).toBe(0);
    expect(readResults(out)).toEqual([]);

    // The fix the error names: $0.50 per million prompt tokens, so each item costs $0.50 and two reach the limit.
    writeFileSync(path.join(setup.dir, ".lllmrc.yaml"), "prices:\n  local-llama: {input: 0.5, output: 1}\n");
    const priced = await batchInProcess(args, setup.env, { cwd: setup.dir });
    expect(priced.code, priced.stderr).toBe(3);
    expect(priced.stderr).toContain("--max-cost 1 reached: $1.00 spent");
    expect(setup.answered()).toBe(2);
    expect(readResults(out).every((line) => line.cost === 0.5)).toBe(true);
  }, 120_000);
});
