import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropicServer, startMockGeminiServer, type MockBatchJob, type MockBatchJobs, type MockBatchOptions } from "../../src/testing/index.js";
import { batch, readResults, removeTempDirs } from "./batchTestHelpers.js";
import { OPENAI_BATCH_KEY, openAIBatchServer, providerBatchProject, threeRounds, type ProviderBatchSetup } from "./providerBatchHelpers.js";

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.map((close) => close()));
  closers = [];
  removeTempDirs();
});

/** A mock of each provider answering the three-round agent in batch jobs, with `batch` its jobs' options. */
const providers = {
  openai: async (options: MockBatchOptions): Promise<{ batches: MockBatchJobs; project: (count: number) => ProviderBatchSetup }> => {
    const server = await openAIBatchServer(options);
    closers.push(() => server.close());
    return { batches: server.batches, project: (count) => providerBatchProject({ model: "gpt-4o-mini", invokerConfig: `{base_url: "${server.url}", api_key_env: MOCK_KEY}`, count, extraEnv: { MOCK_KEY: OPENAI_BATCH_KEY } }) };
  },
  anthropic: async (options: MockBatchOptions): Promise<{ batches: MockBatchJobs; project: (count: number) => ProviderBatchSetup }> => {
    const server = await startMockAnthropicServer({ handler: threeRounds, batch: options });
    closers.push(() => server.close());
    return { batches: server.batches, project: (count) => providerBatchProject({ model: "anthropic/claude-haiku-4-5", count, extraEnv: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-ant-mock-batch-key" } }) };
  },
  gemini: async (options: MockBatchOptions): Promise<{ batches: MockBatchJobs; project: (count: number) => ProviderBatchSetup }> => {
    const server = await startMockGeminiServer({ handler: threeRounds, batch: options });
    closers.push(() => server.close());
    return { batches: server.batches, project: (count) => providerBatchProject({ model: "gemini/gemini-2.5-flash", count, extraEnv: { GEMINI_BASE_URL: server.url, GEMINI_API_KEY: "gm-mock-batch-key" } }) };
  },
};

const run = (project: ProviderBatchSetup, options: { cwd?: string } = {}): ReturnType<typeof batch> =>
  batch([project.tactic, "--inputs", project.inputs, "--lines", "--out", project.out, "--provider-batch", "--poll-interval", "0.05", "--no-log"], project.env, { ...options, timeoutMs: 90_000 });

/** A result line's custom id (OpenAI's and Anthropic's `custom_id`, Gemini's `metadata.key`), and the line under another. */
const idOf = (line: string): string => {
  const value = JSON.parse(line) as { custom_id?: string; metadata?: { key: string } };
  return value.custom_id ?? value.metadata!.key;
};
const withId = (line: string, id: string): string => {
  const value = JSON.parse(line) as { custom_id?: string; metadata?: { key: string } };
  if (value.custom_id !== undefined) value.custom_id = id;
  else value.metadata!.key = id;
  return JSON.stringify(value);
};

/** Rewrite the results of the job with this number (1: round 1's) only. */
const onJob = (number: number, rewrite: (lines: string[]) => string[]) => (lines: string[], job: MockBatchJob): string[] => (job.id.endsWith(`_${number}`) || job.id === `mock${number}` ? rewrite(lines) : lines);

describe("lllm batch --provider-batch checks a job's results before it uses any", () => {
  it("a results line that is not JSON fails its job with the line named, none of its answers used; always so, each item fails after three submissions", async () => {
    const provider = await providers.openai({ resultLines: (lines) => ['{"custom_id": "i1-1", "respo', ...lines] });
    const project = provider.project(3);
    const result = await run(project);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/openai batch job batch_mock_1 ended \(failed: its results cannot be read: the output file file-batch_mock_1-output, line 1 is not JSON: "\{\\"custom_id\\": \\"i1-1\\", \\"respo"\): 0 answers, 3 to submit again/);
    expect(provider.batches.count).toBe(3);
    const lines = readResults(project.out);
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line.status).toBe("error");
      expect(line.error!.code).toBe("provider_batch_failed");
      expect(line.error!.message).toContain("ended without answering this request (failed: its results cannot be read: the output file file-batch_mock_3-output, line 1 is not JSON");
      expect(line.error!.message).toContain("after 3 submissions");
    }
  }, 120_000);

  it("a results line that is JSON but no result (null) fails its job instead of being polled forever: its requests are submitted again, and the batch finishes", async () => {
    const provider = await providers.anthropic({ resultLines: onJob(1, (lines) => [...lines.slice(0, 1), "null", ...lines.slice(1)]) });
    const project = provider.project(3);
    const result = await run(project);
    expect(result.stderr).toMatch(/anthropic batch job msgbatch_mock_1 ended \(failed: its results cannot be read: the results, line 2 is not a JSON object\): 0 answers, 3 to submit again/);
    expect(result.code, result.stderr).toBe(0);
    expect(provider.batches.count).toBe(4);
    expect(readResults(project.out).map((line) => line.output).sort()).toEqual(["q1: 13", "q2: 13", "q3: 13"]);
  }, 120_000);

  it("a results line longer than a reply may be (reply_size) stops the download there and fails its job", async () => {
    const provider = await providers.openai({ resultLines: onJob(1, (lines) => lines.map((line, index) => (index === 1 ? `{"padding": "${"x".repeat(3 * 1024 * 1024)}", ${line.slice(1)}` : line))) });
    const project = provider.project(3);
    writeFileSync(path.join(project.dir, ".lllmrc.yaml"), "reply_size: 1M\n");
    const result = await run(project, { cwd: project.dir });
    expect(result.stderr).toMatch(/batch_mock_1 ended \(failed: its results cannot be read: the output file file-batch_mock_1-output, line 2 is longer than 1\.1 MB \(a reply is at most `reply_size`\)\): 0 answers, 3 to submit again/);
    expect(result.code, result.stderr).toBe(0);
    expect(readResults(project.out).map((line) => line.output).sort()).toEqual(["q1: 13", "q2: 13", "q3: 13"]);
  }, 120_000);

  it("an answer's id is the provider's text: its warning quotes it on one line, so that it cannot forge a line of lllm's own", async () => {
    const forged = "lllm batch: 999 ok, 0 failed in 0.1 s";
    const provider = await providers.openai({ resultLines: onJob(1, (lines) => [...lines, withId(lines[0]!, `x\u001b[2J\n${forged}`)]) });
    const project = provider.project(2);
    const result = await run(project);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`1 answer has an id of no request of this job (\`x\\u001b[2J\\n${forged}\`): not used`);
    expect(result.stderr.split("\n").filter((line) => line.startsWith(forged))).toEqual([]);
    expect(result.stderr).not.toContain("\u001b");
    expect(result.stderr).toContain("lllm batch: 2 ok, 0 failed");
  }, 120_000);

  for (const name of ["openai", "anthropic", "gemini"] as const) {
    it(`${name}: an answer whose id comes twice, or is no request of its job, is refused: no item gets another's answer, the requests are asked again, the summary says so`, async () => {
      // The last round's job: the first answer comes again under the second's id (last in the file, so that "last
      // wins" would give the second item the first one's answer), and the third answer comes under an unknown id.
      let refusedIds: string[] = [];
      const provider = await providers[name]({
        resultLines: onJob(3, (lines) => {
          refusedIds = [idOf(lines[1]!), idOf(lines[2]!)];
          const unknown = `${idOf(lines[2]!).replace(/-\d+$/, "")}x-3`;
          return [lines[0]!, lines[1]!, withId(lines[2]!, unknown), lines[3]!, withId(lines[0]!, idOf(lines[1]!))];
        }),
      });
      const project = provider.project(4);
      const result = await run(project);
      expect(result.code, result.stderr).toBe(0);
      const lines = readResults(project.out);
      expect(lines.map((line) => line.id).sort()).toEqual(["1", "2", "3", "4"]);
      for (const line of lines) expect(line.output).toBe(`q${line.id}: 13`);
      expect(result.stderr).toContain(`answers refused: 1 id came more than once (\`${refusedIds[0]}\`): no answer of it is used, the request is asked again; 1 answer has an id of no request of this job`);
      expect(result.stderr).toContain("ended: 2 answers, 2 to submit again");
      expect(result.stderr).toContain("answers of provider batch jobs refused: 1 request whose id came more than once (asked again); 1 answer with the id of no request of its job");
      // Asked again: the two requests without a usable answer, in a fourth job.
      expect(provider.batches.count).toBe(4);
      expect([...provider.batches.jobs.values()][3]!.requests.map((request) => request.customId).sort()).toEqual([...refusedIds].sort());
    }, 120_000);
  }
});
