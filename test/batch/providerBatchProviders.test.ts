import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropicServer, startMockGeminiServer, type MockBatchJobs, type MockBatchOptions, type MockRequestBody } from "../../src/testing/index.js";
import { batch, batchInProcess, readResults, removeTempDirs, spawnBatch } from "./batchTestHelpers.js";
import { expectSummaryCost, killDuringRoundTwo, providerBatchProject, threeRounds, toolRuns, TURN_USAGE } from "./providerBatchHelpers.js";

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.map((close) => close()));
  closers = [];
  removeTempDirs();
});

const COUNT = 1000;

/**
 * The same three-round tool-using tactic through Anthropic's Message Batches and Gemini's batch mode: killed while
 * round 2's job runs, run again: the job is polled again (three jobs in all), every item is written once, at the
 * provider's batch price.
 */
async function killAndResume(options: { provider: string; model: string; modelArgs?: string; env: NodeJS.ProcessEnv; batches: MockBatchJobs; batchOptions: MockBatchOptions; price: { input: number; output: number }; liveCalls: () => number }): Promise<void> {
  const project = providerBatchProject({ model: options.model, count: COUNT, extraEnv: options.env, ...(options.modelArgs ? { modelArgs: options.modelArgs } : {}) });
  const calls = path.join(project.dir, "calls.txt");
  const env = { ...project.env, CALLS_FILE: calls };
  const args = [project.tactic, "--inputs", project.inputs, "--lines", "--out", project.out, "--provider-batch", "--poll-interval", "0.05", "--no-log"];
  const first = spawnBatch(args, env);
  await killDuringRoundTwo(first, options.batches, options.batchOptions, options.provider);
  expect(toolRuns(calls)).toBe(COUNT);
  // Spawned, as the killed run: the run after a kill picks up what it left.
  const again = await batch(args, env);
  expect(again.stderr).toContain("polling 1 provider batch job submitted by an earlier run");
  expect(again.code, again.stderr).toBe(0);
  expect(options.batches.count).toBe(3);
  const submitted = [...options.batches.jobs.values()].flatMap((job) => job.requests.map((request) => request.customId));
  expect(new Set(submitted).size).toBe(3 * COUNT);
  const lines = readResults(project.out);
  expect(lines.map((line) => Number(line.id)).sort((a, b) => a - b)).toEqual(Array.from({ length: COUNT }, (_, index) => index + 1));
  const cost = 3 * ((TURN_USAGE.prompt_tokens * options.price.input + TURN_USAGE.completion_tokens * options.price.output) / 2 / 1_000_000);
  for (const line of lines) {
    expect(line.status).toBe("ok");
    expect(line.output).toBe(`q${line.id}: 13`);
    expect(line.cost).toBeCloseTo(cost, 12);
  }
  // The summary counts the whole batch, the rounds of the killed run too, at the batch price.
  expectSummaryCost(again.stderr, COUNT, COUNT * cost);
  // Round 1's tools ran in the killed run, round 2's in this one: each call once.
  expect(toolRuns(calls)).toBe(2 * COUNT);
  expect(options.liveCalls()).toBe(0);
}

/** The model turns of a request: Anthropic's assistant messages' blocks, Gemini's model contents' parts. */
const anthropicTurns = (body: MockRequestBody): unknown[] => (body.messages ?? []).filter((message) => message["role"] === "assistant").map((message) => message["content"]);
const geminiTurns = (body: MockRequestBody): unknown[] => ((body["contents"] ?? []) as Array<{ role: string; parts: unknown }>).filter((content) => content.role === "model").map((content) => content.parts);

/**
 * Every later request of an item carries its earlier answers back unchanged, as the live model sends them: each
 * model turn is exactly the content of the answer it was (thinking blocks with their signatures, Gemini's call parts
 * with their thoughtSignature and id), in order. Returns how many requests were checked.
 */
function expectAnswersSentBack(batches: MockBatchJobs, turnsOf: (body: MockRequestBody) => unknown[], contentOf: (answer: unknown) => unknown): number {
  // A custom id is `<item key>-<digest>-<n>`: each answer under its item and the round of the request it answers (one
  // more than the model turns that request carried).
  const itemOf = (customId: string): string => customId.slice(0, customId.indexOf("-"));
  const requests = [...batches.jobs.values()].flatMap((job) => job.requests);
  const roundOf = new Map(requests.map((request) => [request.customId, turnsOf(request.body).length + 1]));
  const answers = new Map<string, unknown>();
  for (const job of batches.jobs.values()) for (const result of job.results ?? []) if (result.ok) answers.set(`${itemOf(result.customId)} ${roundOf.get(result.customId)}`, contentOf(result.answer));
  for (const request of requests) {
    const item = itemOf(request.customId);
    expect(turnsOf(request.body), request.customId).toEqual(Array.from({ length: roundOf.get(request.customId)! - 1 }, (_, index) => answers.get(`${item} ${index + 1}`)));
  }
  return requests.length;
}

const anthropicContent = (answer: unknown): unknown => (answer as { content: unknown }).content;
const geminiParts = (answer: unknown): unknown => (answer as { response: { candidates: Array<{ content: { parts: unknown } }> } }).response.candidates[0]!.content.parts;

describe("lllm batch --provider-batch over Anthropic's and Gemini's batch APIs", () => {
  it("Anthropic Message Batches with extended thinking: 1,000 items, three rounds, killed during round 2 and resumed, at half the price; each round sends the thinking blocks back with their signatures", async () => {
    const batchOptions: MockBatchOptions = { delayMs: 1000 };
    // The mock refuses a round whose last tool-calling turn lacks its thinking, or carries a signature it did not give.
    const server = await startMockAnthropicServer({ handler: threeRounds, batch: batchOptions, thinking: "I add them." });
    closers.push(() => server.close());
    await killAndResume({
      provider: "anthropic",
      model: "anthropic/claude-haiku-4-5",
      modelArgs: "{thinking: {budget_tokens: 1024}}",
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-ant-mock-batch-key" },
      batches: server.batches,
      batchOptions,
      price: { input: 1.0, output: 5.0 },
      liveCalls: () => server.requests.filter((request) => request.path === "/v1/messages").length,
    });
    const created = server.requests.filter((request) => request.method === "POST" && request.path === "/v1/messages/batches");
    expect(created.every((request) => request.headers["x-api-key"] === "sk-ant-mock-batch-key" && request.headers["anthropic-version"] === "2023-06-01")).toBe(true);
    expect(expectAnswersSentBack(server.batches, anthropicTurns, anthropicContent)).toBe(3 * COUNT);
    const roundThree = [...server.batches.jobs.values()][2]!.requests[0]!.body;
    expect(roundThree["thinking"]).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(anthropicTurns(roundThree).map((blocks) => (blocks as Array<Record<string, unknown>>)[0])).toEqual([expect.objectContaining({ type: "thinking", thinking: "I add them." }), expect.objectContaining({ type: "thinking", thinking: "I add them." })]);
  }, 180_000);

  it("Gemini batch mode (thought signatures, no call ids): 1,000 items, three rounds, killed during round 2 and resumed, at half the price; each round sends the call parts back as they came", async () => {
    const batchOptions: MockBatchOptions = { delayMs: 1000 };
    // The mock refuses a round whose function calls lack their thoughtSignature or carry one it did not give.
    const server = await startMockGeminiServer({ handler: threeRounds, batch: batchOptions, thoughtSignatures: true });
    closers.push(() => server.close());
    await killAndResume({
      provider: "gemini",
      model: "gemini/gemini-2.5-flash",
      env: { GEMINI_BASE_URL: server.url, GEMINI_API_KEY: "gm-mock-batch-key" },
      batches: server.batches,
      batchOptions,
      price: { input: 0.3, output: 2.5 },
      liveCalls: () => server.requests.filter((request) => /:(stream)?generateContent$/i.test(request.path)).length,
    });
    // Round 3 carries round 1's and round 2's call parts, each its own (lllm's ids for calls without one never repeat in an item).
    expect(expectAnswersSentBack(server.batches, geminiTurns, geminiParts)).toBe(3 * COUNT);
  }, 180_000);

  it("Gemini batch mode with call ids: each function response names its call's id, and the calls go back with their thoughtSignature", async () => {
    const server = await startMockGeminiServer({ handler: threeRounds, batch: {}, thoughtSignatures: true, functionCallIds: true });
    closers.push(() => server.close());
    const project = providerBatchProject({ model: "gemini/gemini-2.5-flash", count: 3, extraEnv: { GEMINI_BASE_URL: server.url, GEMINI_API_KEY: "gm-mock-batch-key" } });
    // In this process: nothing here depends on being a process of its own.
    const result = await batchInProcess([project.tactic, "--inputs", project.inputs, "--lines", "--out", project.out, "--provider-batch", "--poll-interval", "0.05", "--no-log"], project.env);
    expect(result.stderr).not.toContain("refused");
    expect(result.code, result.stderr).toBe(0);
    expect(readResults(project.out).map((line) => line.output).sort()).toEqual(["q1: 13", "q2: 13", "q3: 13"]);
    expect(server.batches.count).toBe(3);
    expect(expectAnswersSentBack(server.batches, geminiTurns, geminiParts)).toBe(9);
    for (const request of [...server.batches.jobs.values()][2]!.requests) {
      const contents = request.body["contents"] as Array<{ role: string; parts: Array<Record<string, { id?: unknown; name?: unknown }>> }>;
      const calls = contents.flatMap((content) => content.parts).flatMap((part) => (part["functionCall"] ? [part["functionCall"].id] : []));
      const responses = contents.flatMap((content) => content.parts).flatMap((part) => (part["functionResponse"] ? [part["functionResponse"].id] : []));
      expect(calls).toHaveLength(2);
      expect(calls.every((id) => typeof id === "string" && id.startsWith("fc-"))).toBe(true);
      expect(responses).toEqual(calls);
    }
  }, 120_000);
});
