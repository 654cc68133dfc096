import { afterEach, describe, expect, it } from "vitest";
import type { MockOpenAIServer } from "../../src/testing/index.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { batch, readResults, removeTempDirs, spawnBatch } from "./batchTestHelpers.js";
import { ITEM_BATCH_COST, openAIBatchServer, providerBatchProject } from "./providerBatchHelpers.js";

let servers: MockOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
  removeTempDirs();
});

const modelCalls = (server: MockOpenAIServer): number => server.requests.filter((request) => request.path === "/v1/chat/completions").length;

describe("lllm batch --provider-batch over OpenAI's Batch API", () => {
  it("runs a three-round tool-using tactic as three batch jobs, tools run locally between rounds, at the batch price", async () => {
    const server = await openAIBatchServer();
    servers.push(server);
    const project = providerBatchProject({ model: "gpt-4o-mini", invokerConfig: `{base_url: "${server.url}", api_key_env: MOCK_KEY}`, count: 40, extraEnv: { MOCK_KEY: "sk-mock-provider-batch" } });
    const result = await batch([project.tactic, "--inputs", project.inputs, "--lines", "--out", project.out, "--provider-batch", "--poll-interval", "0.05"], project.env);
    expect(result.stderr).toContain("submitted openai batch job");
    expect(result.code).toBe(0);
    const lines = readResults(project.out);
    expect(lines).toHaveLength(40);
    for (const line of lines) {
      expect(line.status).toBe("ok");
      // 1 + 2 = 3, then 3 + 10 = 13: the tool ran between the rounds.
      expect(line.output).toBe(`q${line.id}: 13`);
      expect(line.usage.llm_calls).toBe(3);
      expect(line.cost).toBeCloseTo(ITEM_BATCH_COST, 12);
    }
    expect(server.batches.count).toBe(3);
    expect(modelCalls(server)).toBe(0);
    const uploads = server.requests.filter((request) => request.path === "/v1/files");
    expect(uploads).toHaveLength(3);
    expect(uploads.every((request) => request.headers.authorization === "Bearer sk-mock-provider-batch")).toBe(true);
    expect(result.stderr).toContain(`$${(40 * ITEM_BATCH_COST).toPrecision(2)}`);
  }, 120_000);
});
