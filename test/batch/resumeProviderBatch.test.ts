import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MockOpenAIServer } from "../../src/testing/index.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { batch, readResults, removeTempDirs, spawnBatch } from "./batchTestHelpers.js";
import { OPENAI_BATCH_KEY, openAIBatchServer, providerBatchProject, toolRuns } from "./providerBatchHelpers.js";
import { existsSync, readFileSync } from "node:fs";

// `lllm batch --provider-batch` killed while items' tools run, run again: the items go on from where they stopped (their
// answered rounds from the job store, not submitted again; their kept tool outcomes replayed), and a call the kill
// cut short runs again only when its tool says it is safe: otherwise its item fails naming the call, until the same
// command with --retry-failed --rerun-unknown.

let servers: MockOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
  removeTempDirs();
});

function heldCalls(file: string): number {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((line) => line.endsWith(" held")).length : 0;
}

describe("lllm batch --provider-batch run again after a kill during a tool call", () => {
  it("refuses to run again a call of a tool that is not idempotent; --rerun-unknown runs it; no round is submitted twice", async () => {
    const server = await openAIBatchServer({ delayMs: 0 });
    servers.push(server);
    // `add` is declared not idempotent here: a call cut short may have acted.
    const setup = providerBatchProject({ model: "gpt-4o-mini", invokerConfig: `{base_url: "${server.url}", api_key_env: MOCK_KEY}`, count: 10, idempotent: false, extraEnv: { MOCK_KEY: OPENAI_BATCH_KEY } });
    const calls = path.join(setup.dir, "calls.txt");
    const env = { ...setup.env, CALLS_FILE: calls };
    const args = [setup.tactic, "--inputs", setup.inputs, "--lines", "--out", setup.out, "--provider-batch", "--poll-interval", "0.05"];
    // From the 5th call on, the tool never returns: some items are stuck in their first call when lllm is killed.
    const first = spawnBatch(args, { ...env, HOLD_AT: "5" });
    expect(await waitUntil(() => heldCalls(calls) > 0, 120_000), first.stderr()).toBe(true);
    first.child.kill("SIGKILL");
    await first.done;
    const held = heldCalls(calls);
    const ranBefore = toolRuns(calls);

    const again = await batch(args, env);
    expect(again.code).toBe(1);
    const lines = readResults(setup.out);
    expect(lines).toHaveLength(10);
    // The items stuck in a call, and those killed as they started one (noted as started: it may have run).
    const refused = lines.filter((line) => line.status === "error");
    expect(refused.length).toBeGreaterThanOrEqual(held);
    for (const line of refused) {
      expect(line.error?.code).toBe("resume_unknown_call");
      expect(line.error?.message).toContain("the run stopped during a call of `add` (agent `bot`");
    }
    expect(lines.filter((line) => line.status === "ok").every((line) => line.output === `q${line.id}: 13`)).toBe(true);
    // The refused items ran nothing: the calls cut short are not run again.
    expect(toolRuns(calls)).toBeLessThanOrEqual(ranBefore + (10 - refused.length) * 2);

    const resumed = await batch([...args, "--retry-failed", "--rerun-unknown"], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(readResults(setup.out).map((line) => [line.id, line.status, line.output]).sort()).toEqual(Array.from({ length: 10 }, (_, index) => [String(index + 1), "ok", `q${index + 1}: 13`]).sort());
    // Each of the 20 calls once, and those cut short once more: every held one, and any other the kill caught
    // between its tool's return and its outcome reaching the store (its item was refused too). No more.
    expect(toolRuns(calls)).toBeGreaterThanOrEqual(20 + held);
    expect(toolRuns(calls)).toBeLessThanOrEqual(20 + refused.length);
    // No request of any round was submitted twice.
    const submitted = [...server.batches.jobs.values()].flatMap((job) => job.requests.map((request) => request.customId));
    expect(new Set(submitted).size).toBe(submitted.length);
    expect(submitted).toHaveLength(30);
  }, 240_000);
});
