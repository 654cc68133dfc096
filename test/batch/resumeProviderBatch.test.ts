import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { tempDir, writeTree } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { batch, batchInProcess, readResults, removeTempDirs, spawnBatch } from "./batchTestHelpers.js";
import { OPENAI_BATCH_KEY, openAIBatchServer, providerBatchProject, toolRuns } from "./providerBatchHelpers.js";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";

// `lllm batch --provider-batch` killed while items' tools run, run again: the items go on from where they stopped (their
// answered rounds from the job store, not submitted again; their kept tool outcomes replayed), and a call the kill
// cut short runs again only when its tool says it is safe: otherwise its item fails naming the call, until the same
// command with --retry-failed --rerun-unknown.

const Libsql = createRequire(import.meta.url)("libsql") as typeof import("libsql");

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
    expect(again.code, again.stderr).toBe(1);
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

describe("lllm batch --provider-batch run again after a kill: agents that run side by side", () => {
  it("each agent gets the answers to its own requests, though after the kill they ask in another order", async () => {
    // `bot` calls the agents `x` and `y` in one answer. Each naps (x 300 ms, y not at all), asks again, and is told to
    // call `hold`, which holds in the first run: y asked before x there. Run again, the naps are answered from the
    // journal at once and x asks first: an answer named by the order of asking would then be y's. (A tactic with
    // agents used as tools waits for its answers in memory, not parked.)
    const server = await startMockOpenAIServer({
      apiKey: OPENAI_BATCH_KEY,
      batch: { delayMs: 0 },
      handler: (body) => {
        const messages = body.messages ?? [];
        const system = String(messages[0]?.content ?? "");
        const results = messages.filter((message) => message.role === "tool").map((message) => String(message.content));
        if (system === "Lead.") return results.length === 0 ? { tool_calls: [{ name: "x", arguments: { input: "go" } }, { name: "y", arguments: { input: "go" } }] } : results.map((result) => /\w got held for \w/.exec(result)?.[0]).join(" | ");
        const who = /^You are (\w)\.$/.exec(system)![1]!;
        if (results.length === 0) return { tool_calls: [{ name: "nap", arguments: { ms: who === "x" ? 300 : 0 } }] };
        if (results.length === 1) return { tool_calls: [{ name: "hold", arguments: { who } }] };
        return `${who} got ${/held for \w/.exec(results[1]!)?.[0]}`;
      },
    });
    servers.push(server);
    const dir = tempDir();
    const agent = (name: string) => `  - name: ${name}\n    description: Does ${name}'s part.\n    model_name: gpt-4o-mini\n    invoker_config: {base_url: "${server.url}", api_key_env: MOCK_KEY}\n    system_prompt: You are ${name}.\n    tools: [kit.tools:nap, kit.tools:hold]\n`;
    writeTree(dir, {
      "kit/lllm.toml": '[package]\nname = "kit"\nversion = "1.0.0"\n',
      "kit/tools/nap.mjs": 'import { appendFileSync } from "node:fs";\nexport const nap = { name: "nap", description: "Naps.", idempotent: true, parameters: { type: "object", properties: { ms: { type: "number" } }, required: ["ms"] }, run: ({ ms }) => { appendFileSync(process.env.CALLS_FILE, `nap ${ms}\\n`); return new Promise((resolve) => setTimeout(() => resolve("rested"), ms)); } };\n',
      // Notes each call; holds for good while $HOLD is set (the first run is killed there).
      "kit/tools/hold.mjs": 'import { appendFileSync } from "node:fs";\nexport const hold = { name: "hold", description: "Holds.", idempotent: true, parameters: { type: "object", properties: { who: { type: "string" } }, required: ["who"] }, run: ({ who }) => { appendFileSync(process.env.CALLS_FILE, `held ${who}\\n`); return process.env.HOLD ? new Promise(() => {}) : `held for ${who}`; } };\n',
      "tactic.yaml": `name: pair\npackages: [./kit]\nagent_configs:\n  - name: bot\n    model_name: gpt-4o-mini\n    invoker_config: {base_url: "${server.url}", api_key_env: MOCK_KEY}\n    system_prompt: Lead.\n    tools: [agent:x, agent:y]\n${agent("x")}${agent("y")}`,
      "items.txt": "q1\n",
    });
    const calls = path.join(dir, "calls.txt");
    const env = { LLLM_HOME: path.join(dir, "home"), LLLM_RETRY_DELAY_MS: "20", MOCK_KEY: OPENAI_BATCH_KEY, CALLS_FILE: calls };
    const out = path.join(dir, "out.jsonl");
    const args = [path.join(dir, "tactic.yaml"), "--inputs", path.join(dir, "items.txt"), "--lines", "--out", out, "--provider-batch", "--poll-interval", "0.05", "--no-log"];
    const first = spawnBatch(args, { ...env, HOLD: "1" });
    const holding = () => (existsSync(calls) ? readFileSync(calls, "utf8").split("\n").filter((line) => line.startsWith("held")).length : 0);
    expect(await waitUntil(() => holding() === 2, 120_000), first.stderr()).toBe(true);
    first.child.kill("SIGKILL");
    await first.done;

    const again = await batch(args, env);
    expect(again.code, again.stderr).toBe(0);
    expect(readResults(out).map((line) => line.output)).toEqual(["x got held for x | y got held for y"]);
    // The naps ran once, in the first run (the item waited in memory: its calls are journaled too); the holds the
    // kill cut short ran again (their tool says that is safe).
    expect(readFileSync(calls, "utf8").split("\n").filter(Boolean).sort()).toEqual(["held x", "held x", "held y", "held y", "nap 0", "nap 300"]);
  }, 240_000);
});

describe("lllm batch --provider-batch over a store an earlier lllm wrote", () => {
  it("says that the requests an earlier lllm named by their turn are asked again", async () => {
    const server = await openAIBatchServer({ delayMs: 0 });
    servers.push(server);
    const setup = providerBatchProject({ model: "gpt-4o-mini", invokerConfig: `{base_url: "${server.url}", api_key_env: MOCK_KEY}`, count: 1, extraEnv: { MOCK_KEY: OPENAI_BATCH_KEY } });
    const args = [setup.tactic, "--inputs", setup.inputs, "--lines", "--out", setup.out, "--provider-batch", "--poll-interval", "0.05"];
    // In this process (no run here is killed): nothing it checks depends on being a process of its own.
    expect((await batchInProcess(args, setup.env)).code).toBe(0);
    // A request of an unfinished batch, as an lllm that numbered an item's requests left it.
    const database = new Libsql(path.join(setup.home, "logs.db"));
    database.prepare("INSERT INTO provider_batch_requests (out, custom_id, attempts) VALUES (?, ?, 1)").run(path.resolve(setup.out), `i${"0".repeat(24)}-1`);
    database.close();
    const again = await batchInProcess(args, setup.env);
    expect(again.stderr).toContain(`1 request of ${setup.out} was made by an earlier lllm, which named requests otherwise: their items ask again, in new jobs (paid again)`);
  }, 120_000);
});
