import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropicServer, startMockGeminiServer, startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody, type ScriptedTurn } from "../../src/testing/index.js";
import { anthropicRequestBody } from "../../src/providers/anthropicRequestBody.js";
import { geminiRequestBody } from "../../src/providers/geminiRequestBody.js";
import type { ModelRequest } from "../../src/providers/Model.js";
import { chatRequestBody } from "../../src/providers/OpenAIChatModel.js";
import { responsesRequestBody } from "../../src/providers/OpenAIResponsesModel.js";
import { ROOT, runCli, type CliResult } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";

/**
 * Budgets that spend the cap, never past it: each call's answer room is cut to what the rest of the budget can pay,
 * against the mock OpenAI-compatible server with realistic usage (prompt tokens counted from what it is sent, a
 * quarter of its characters, as a tokenizer does for English and JSON; tool-call answers of 30 tokens). gpt-4o at the
 * shipped prices ($2.50 / $10 per million prompt / answer tokens). The runs are the CLI's main() in this process
 * (what a budget sends and says does not depend on being a process of its own); the cut answer's run spawns the
 * built CLI, end to end.
 */
const fixtures = path.join(ROOT, "test/fixtures/limits");
const PRICE = { input: 2.5 / 1_000_000, output: 10 / 1_000_000 };
let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Report {
  output: unknown;
  error?: { code: string; message: string };
  cost: number | null;
  usage: { total_tokens: number; llm_calls: number };
}

/** What the server answered: the usage of each call, as it reported it. */
interface Served {
  promptTokens: number;
  completionTokens: number;
}

/**
 * A researcher that looks one fact up after another for `rounds` rounds, then answers; every call's usage is what a
 * provider would report for that request.
 */
async function research(args: string[], rounds = 40): Promise<{ result: CliResult; report: Report; served: Served[]; bodies: MockRequestBody[] }> {
  const served: Served[] = [];
  let round = 0;
  server = await startMockOpenAIServer({
    handler: (body) => {
      round += 1;
      const promptTokens = Math.ceil(JSON.stringify({ messages: body.messages, tools: body.tools }).length / 4);
      const answer: ScriptedTurn =
        round > rounds
          ? { text: "The facts say so.", usage: { prompt_tokens: promptTokens, completion_tokens: 60 } }
          : { tool_calls: [{ name: "lookup", arguments: { key: `population of district ${round} in the census of 2020, by age group` } }], usage: { prompt_tokens: promptTokens, completion_tokens: 30 } };
      served.push({ promptTokens, completionTokens: typeof answer === "object" ? answer.usage!.completion_tokens : 0 });
      return answer;
    },
  });
  const result = await runCliInProcess(["run", path.join(fixtures, "research.yaml"), "--input", "Which district grew most?", "--json", ...args], {
    cwd: fixtures,
    env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.url, LLLM_HOME: tempDir("lllm-home-") },
  });
  const bodies = server.requests.filter((request) => request.method === "POST").map((request) => request.body);
  return { result, report: JSON.parse(result.stdout) as Report, served, bodies };
}

const costOf = (served: Served[]): number => served.reduce((sum, call) => sum + call.promptTokens * PRICE.input + call.completionTokens * PRICE.output, 0);
const tokensOf = (served: Served[]): number => served.reduce((sum, call) => sum + call.promptTokens + call.completionTokens, 0);

describe("a budget spends its cap, never past it", () => {
  it("a 40-round run under max_cost 0.06 on gpt-4o spends at least 85% of the cap and never more (exit 3)", async () => {
    const { result, report, served } = await research(["--max-cost", "0.06"]);
    expect(result.code, result.stderr).toBe(3);
    expect(report.error!.code).toBe("limit_max_cost");
    // What the provider billed is what the run counted: every answered call, the last one included.
    expect(report.cost).toBeCloseTo(costOf(served), 8);
    expect(report.usage.total_tokens).toBe(tokensOf(served));
    expect(report.cost!).toBeLessThanOrEqual(0.06);
    expect(report.cost!).toBeGreaterThanOrEqual(0.06 * 0.85);
  }, 180_000);

  it("the same for max_tokens: at least 85% of the cap and never more", async () => {
    const { result, report, served } = await research(["--max-tokens", "30000"]);
    expect(result.code, result.stderr).toBe(3);
    expect(report.error!.code).toBe("limit_max_tokens");
    expect(report.usage.total_tokens).toBe(tokensOf(served));
    expect(report.usage.total_tokens).toBeLessThanOrEqual(30_000);
    expect(report.usage.total_tokens).toBeGreaterThanOrEqual(30_000 * 0.85);
  }, 180_000);

  it("a $0.01 cap on gpt-4o makes calls, each sent the answer room the rest of the budget can pay", async () => {
    const { result, report, served, bodies } = await research(["--max-cost", "0.01"]);
    expect(result.code, result.stderr).toBe(3);
    expect(served.length).toBeGreaterThan(1);
    expect(report.cost!).toBeLessThanOrEqual(0.01);
    expect(report.cost).toBeCloseTo(costOf(served), 8);
    // The room reaches the wire as max_tokens: what was left to spend, less the prompt (as estimated before the call:
    // within 1% of what was left), at $10 per million answer tokens; never less than the 256-token minimum.
    let spent = 0;
    bodies.forEach((body, index) => {
      const room = (body as { max_tokens?: unknown }).max_tokens;
      expect(typeof room, `request ${index + 1}`).toBe("number");
      expect(room as number, `request ${index + 1}`).toBeGreaterThanOrEqual(256);
      expect(room as number, `request ${index + 1}`).toBeLessThan(4096);
      expect((room as number) * PRICE.output + served[index]!.promptTokens * PRICE.input, `request ${index + 1}`).toBeLessThanOrEqual((0.01 - spent) * 1.01);
      spent += served[index]!.promptTokens * PRICE.input + served[index]!.completionTokens * PRICE.output;
    });
  }, 180_000);
});

describe("the answer room reaches each provider's wire in its own field", () => {
  const lookups = (count: number): ScriptedTurn[] => Array.from({ length: count }, (_, index) => ({ tool_calls: [{ name: "lookup", arguments: { key: `k${index}` } }] }));
  /** The answer limit of each model request a mock received, read from where its provider takes it. */
  const sentLimits = (requests: Array<{ method: string; body: MockRequestBody }>, read: (body: Record<string, unknown>) => unknown): unknown[] =>
    requests.filter((request) => request.method === "POST").map((request) => read(request.body as Record<string, unknown>));

  it("Anthropic's max_tokens and Gemini's generationConfig.maxOutputTokens, cut below their defaults to what $0.50 can pay at $400 per million answer tokens", async () => {
    const anthropic = await startMockAnthropicServer({ script: lookups(40) });
    const gemini = await startMockGeminiServer({ script: lookups(40) });
    try {
      for (const [model, env, mock, read] of [
        ["anthropic/claude-test", { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: anthropic.url }, anthropic, (body: Record<string, unknown>) => body["max_tokens"]],
        ["gemini/gemini-test", { GEMINI_API_KEY: "k", GEMINI_BASE_URL: gemini.url }, gemini, (body: Record<string, unknown>) => (body["generationConfig"] as Record<string, unknown> | undefined)?.["maxOutputTokens"]],
      ] as const) {
        const result = await runCliInProcess(["run", path.join(fixtures, "research.yaml"), "--model", model, "--input", "go", "--max-cost", "0.5", "--json", "--no-stream"], { cwd: fixtures, env: { ...env, LLLM_HOME: tempDir("lllm-home-") } });
        expect(result.code, `${model}: ${result.stderr}`).toBe(3);
        const limits = sentLimits(mock.requests, read);
        expect(limits.length, model).toBeGreaterThan(1);
        // $0.50 pays at most 1,250 answer tokens; each call is sent less as the budget goes, never under 256.
        for (const limit of limits) {
          expect(typeof limit, model).toBe("number");
          expect(limit as number, model).toBeLessThanOrEqual(1250);
          expect(limit as number, model).toBeGreaterThanOrEqual(256);
        }
        expect(limits.at(-1) as number, model).toBeLessThan(limits[1] as number);
        expect((JSON.parse(result.stdout) as Report).cost!, model).toBeLessThanOrEqual(0.5);
      }
    } finally {
      await Promise.all([anthropic.close(), gemini.close()]);
    }
  }, 180_000);

  it("OpenAI's reasoning models get max_completion_tokens (they refuse max_tokens); a limit the model_args set is lowered, never raised", async () => {
    server = await startMockOpenAIServer({ script: lookups(40) });
    const env = { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.url, LLLM_HOME: tempDir("lllm-home-") };
    const reasoning = await runCliInProcess(["run", path.join(fixtures, "research.yaml"), "--model", "o4-mini", "--input", "go", "--max-cost", "0.01", "--json"], { cwd: fixtures, env });
    expect(reasoning.code, reasoning.stderr).toBe(3);
    const bodies = server.requests.filter((request) => request.method === "POST").map((request) => request.body as Record<string, unknown>);
    expect(bodies.length).toBeGreaterThan(1);
    for (const body of bodies) {
      expect(body["max_tokens"]).toBeUndefined();
      expect(body["max_completion_tokens"] as number).toBeLessThanOrEqual(Math.floor(0.01 / (4.4 / 1_000_000)));
    }
    // loop.yaml asks for 50 answer tokens: a budget with room for more sends 50.
    server.setScript(lookups(3).concat(["Done."]));
    const before = server.requests.length;
    const roomy = await runCliInProcess(["run", path.join(fixtures, "loop.yaml"), "--input", "go", "--max-cost", "5"], { cwd: fixtures, env });
    expect(roomy.code, roomy.stderr).toBe(0);
    const sent = server.requests.slice(before).filter((request) => request.method === "POST").map((request) => (request.body as Record<string, unknown>)["max_tokens"]);
    expect(sent).toEqual([50, 50, 50, 50]);
  }, 180_000);
});

describe("an answer cut off at the room the budget could pay", () => {
  it("is no answer: the run stops on the limit (exit 3, limit_max_cost), not as a success, and says why", async () => {
    server = await startMockOpenAIServer({ script: [{ text: "The district that grew most is", finish_reason: "length", usage: { prompt_tokens: 300, completion_tokens: 700 } }] });
    const env = { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.url, LLLM_HOME: tempDir("lllm-home-") };
    const result = await runCli(["run", path.join(fixtures, "research.yaml"), "--input", "go", "--max-cost", "0.01", "--json"], { cwd: fixtures, env, timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(3);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.output).toBeNull();
    expect(report.error!.code).toBe("limit_max_cost");
    expect(report.error!.message).toMatch(/^max_cost reached \(\$0\.01, --max-cost\): the answer of gpt-4o \(agent `researcher`\) was cut off at \d{3} answer tokens, all that was left could pay \(it asked for up to 4,096\), and a cut answer is not a complete one\./);
    expect(report.usage.llm_calls).toBe(1);
  }, 120_000);
});

describe("the request bodies carry the budget's cut", () => {
  const request = (modelArgs?: Record<string, unknown>): ModelRequest => ({ messages: [{ role: "user", content: "Hi" }], maxAnswerTokens: 300, ...(modelArgs ? { modelArgs } : {}) });

  it("chat completions: max_tokens, or max_completion_tokens for reasoning models; the model_args' own limits lowered in their spelling", () => {
    expect(chatRequestBody("gpt-4o", request())).toMatchObject({ max_tokens: 300 });
    expect(chatRequestBody("gpt-4o", request())).not.toHaveProperty("max_completion_tokens");
    expect(chatRequestBody("gpt-5-mini", request())).toMatchObject({ max_completion_tokens: 300 });
    expect(chatRequestBody("o3", request())).not.toHaveProperty("max_tokens");
    expect(chatRequestBody("gpt-4o", request({ max_completion_tokens: 2000 }))).toMatchObject({ max_completion_tokens: 300 });
    expect(chatRequestBody("gpt-4o", request({ max_tokens: 100 }))).toMatchObject({ max_tokens: 100 });
  });

  it("Responses API: max_output_tokens; Anthropic: max_tokens, with a thinking budget lowered to fit under it; Gemini: maxOutputTokens", () => {
    expect(responsesRequestBody("gpt-4o", request())).toMatchObject({ max_output_tokens: 300 });
    expect(responsesRequestBody("gpt-4o", request({ max_output_tokens: 200 }))).toMatchObject({ max_output_tokens: 200 });
    expect(anthropicRequestBody("claude-haiku-4-5", request())).toMatchObject({ max_tokens: 300 });
    expect(anthropicRequestBody("claude-haiku-4-5", { ...request({ thinking: { budget_tokens: 4000 } }), maxAnswerTokens: 3000 })).toMatchObject({ max_tokens: 3000, thinking: { type: "enabled", budget_tokens: 1500 } });
    // Anthropic's smallest thinking budget (1,024) does not fit under 300: thinking is left off for that call.
    expect(anthropicRequestBody("claude-haiku-4-5", request({ thinking: { budget_tokens: 4000 } }))).not.toHaveProperty("thinking");
    expect(geminiRequestBody(request())).toMatchObject({ generationConfig: { maxOutputTokens: 300 } });
    expect(geminiRequestBody(request({ max_tokens: 100 }))).toMatchObject({ generationConfig: { maxOutputTokens: 100 } });
  });
});
