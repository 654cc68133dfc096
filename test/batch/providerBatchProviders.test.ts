import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropicServer, startMockGeminiServer, type MockBatchJobs, type MockBatchOptions } from "../../src/testing/index.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { batch, readResults, removeTempDirs, spawnBatch } from "./batchTestHelpers.js";
import { providerBatchProject, threeRounds, TURN_USAGE } from "./providerBatchHelpers.js";

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.map((close) => close()));
  closers = [];
  removeTempDirs();
});

const COUNT = 30;

/**
 * The same three-round tool-using tactic through Anthropic's Message Batches and Gemini's batch mode: killed while
 * round 2's job runs, run again: the job is polled again (three jobs in all), every item is written once, at the
 * provider's batch price.
 */
async function killAndResume(options: { provider: string; model: string; env: NodeJS.ProcessEnv; batches: MockBatchJobs; batchOptions: MockBatchOptions; price: { input: number; output: number }; liveCalls: () => number }): Promise<void> {
  const project = providerBatchProject({ model: options.model, count: COUNT, extraEnv: options.env });
  const args = [project.tactic, "--inputs", project.inputs, "--lines", "--out", project.out, "--provider-batch", "--poll-interval", "0.05", "--no-log"];
  const first = spawnBatch(args, project.env);
  await waitUntil(() => (first.stderr().match(new RegExp(`submitted ${options.provider} batch job`, "g")) ?? []).length === 2, 60_000);
  first.child.kill("SIGKILL");
  await first.done;
  const again = await batch(args, project.env);
  expect(again.stderr).toContain("polling 1 provider batch job submitted by an earlier run");
  expect(again.code).toBe(0);
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
  expect(options.liveCalls()).toBe(0);
}

describe("lllm batch --provider-batch over Anthropic's and Gemini's batch APIs", () => {
  it("Anthropic Message Batches: three rounds, killed during round 2 and resumed, at half the price", async () => {
    const batchOptions: MockBatchOptions = { delayMs: 1000 };
    const server = await startMockAnthropicServer({ handler: threeRounds, batch: batchOptions });
    closers.push(() => server.close());
    await killAndResume({
      provider: "anthropic",
      model: "anthropic/claude-haiku-4-5",
      env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-ant-mock-batch-key" },
      batches: server.batches,
      batchOptions,
      price: { input: 1.0, output: 5.0 },
      liveCalls: () => server.requests.filter((request) => request.path === "/v1/messages").length,
    });
    const created = server.requests.filter((request) => request.method === "POST" && request.path === "/v1/messages/batches");
    expect(created.every((request) => request.headers["x-api-key"] === "sk-ant-mock-batch-key" && request.headers["anthropic-version"] === "2023-06-01")).toBe(true);
  }, 180_000);

  it("Gemini batch mode: three rounds, killed during round 2 and resumed, at half the price", async () => {
    const batchOptions: MockBatchOptions = { delayMs: 1000 };
    const server = await startMockGeminiServer({ handler: threeRounds, batch: batchOptions });
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
  }, 180_000);
});
