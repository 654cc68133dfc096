import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropicServer, type MockBatchJobs, type MockBatchOptions } from "../../src/testing/index.js";
import { runCli } from "../helpers/runCli.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { batch, readResults, removeTempDirs, spawnBatch } from "./batchTestHelpers.js";
import { OPENAI_BATCH_KEY, openAIBatchServer, providerBatchProject, threeRounds } from "./providerBatchHelpers.js";

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.map((close) => close()));
  closers = [];
  removeTempDirs();
});

const argsOf = (project: ReturnType<typeof providerBatchProject>): string[] => [project.tactic, "--inputs", project.inputs, "--lines", "--out", project.out, "--provider-batch", "--poll-interval", "0.05", "--no-log"];

/**
 * A batch running with its first job at the provider (held there), cancelled while it runs by `cancel`: the running
 * batch stops and says so, and submits nothing again, however many polls it makes until it ends (the batch exits 1:
 * its items are not done). Returns the stopped batch's stderr.
 */
async function cancelWhileRunning(options: { project: ReturnType<typeof providerBatchProject>; batches: MockBatchJobs; provider: string; jobId: string; cancel: () => Promise<void> }): Promise<string> {
  const running = spawnBatch(argsOf(options.project), options.project.env);
  expect(await waitUntil(() => running.stderr().includes(`submitted ${options.provider} batch job ${options.jobId}`), 60_000), running.stderr()).toBe(true);
  await options.cancel();
  // Before, the running batch submitted the same requests again at once, as a new job (paid again).
  const ended = await waitUntil(() => running.child.exitCode !== null || options.batches.count > 1, 60_000);
  expect(ended, running.stderr()).toBe(true);
  expect(options.batches.count, running.stderr()).toBe(1);
  const stopped = await running.done;
  expect(stopped.code, stopped.stderr).toBe(1);
  expect(stopped.stderr).toContain(`${options.provider} batch job ${options.jobId} was cancelled: the batch stops (its requests are not submitted again)`);
  expect(stopped.stderr).toContain(`the ${options.provider} batch job ${options.jobId} was cancelled while this batch ran`);
  expect(stopped.stderr).toMatch(/lllm batch: 0 ok, 0 failed, 4 cancelled/);
  expect(readResults(options.project.out)).toHaveLength(0);
  expect(options.batches.count).toBe(1);
  return stopped.stderr;
}

describe("a provider job cancelled while its batch runs is final for that run", () => {
  it("lllm batch --cancel: the running batch stops at its next poll and says so; the message says what happens next; the same command then goes on", async () => {
    const options: MockBatchOptions = { delayMs: 3_600_000 };
    const server = await openAIBatchServer(options);
    closers.push(() => server.close());
    const project = providerBatchProject({ model: "gpt-4o-mini", invokerConfig: `{base_url: "${server.url}", api_key_env: MOCK_KEY}`, count: 4, extraEnv: { MOCK_KEY: OPENAI_BATCH_KEY } });
    let cancelMessage = "";
    await cancelWhileRunning({
      project,
      batches: server.batches,
      provider: "openai",
      jobId: "batch_mock_1",
      cancel: async () => {
        const cancel = await runCli(["batch", "--cancel", "--out", project.out], { env: project.env });
        expect(cancel.code, cancel.stderr).toBe(0);
        cancelMessage = cancel.stderr;
      },
    });
    expect(cancelMessage).toContain(`1 job cancelled at the provider. An \`lllm batch\` running on ${project.out} stops at its next poll, and submits nothing again. Running the same command again takes what the job answered before it was cancelled, and submits its other requests again, in new jobs (paid again).`);
    options.delayMs = 0;
    const again = await batch(argsOf(project), project.env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/batch_mock_1 ended \(cancelled\): 0 answers, 4 to submit again/);
    expect(readResults(project.out).map((line) => line.output).sort()).toEqual(["q1: 13", "q2: 13", "q3: 13", "q4: 13"]);
  }, 180_000);

  it("cancelled in the provider's console (Anthropic: the batch ends with its requests canceled): the running batch stops too", async () => {
    const options: MockBatchOptions = { delayMs: 3_600_000 };
    const server = await startMockAnthropicServer({ handler: threeRounds, batch: options });
    closers.push(() => server.close());
    const project = providerBatchProject({ model: "anthropic/claude-haiku-4-5", count: 4, extraEnv: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-ant-mock-batch-key" } });
    await cancelWhileRunning({
      project,
      batches: server.batches,
      provider: "anthropic",
      jobId: "msgbatch_mock_1",
      cancel: async () => {
        server.batches.cancel("msgbatch_mock_1");
      },
    });
  }, 180_000);
});
