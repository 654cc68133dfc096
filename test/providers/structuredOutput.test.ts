import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropicServer, startMockGeminiServer, startMockOpenAIServer, type ScriptedTurn } from "../../src/testing/index.js";
import { ROOT, runCli, type CliOptions, type CliResult } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

/** A busy machine can take long to start the CLI: a generous limit, since a passing run waits no longer than it must. */
const cli = (args: string[], options: CliOptions = {}): Promise<CliResult> => runCli(args, { timeoutMs: 120_000, ...options });

/**
 * A tactic's `output` schema on each provider, from the CLI against each mock: the answer is checked against the
 * schema, a mismatch goes back to the model once to be fixed, and `--json` has the parsed value under `output`.
 * The tactic offers a tool too, so each provider's way of asking for JSON meets tool calls.
 */
const tactic = path.join(ROOT, "test/fixtures/limits/weather-report.yaml");
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

type Block = Record<string, unknown>;
type Report = { output: unknown; usage: { llm_calls: number } };
const lookup: ScriptedTurn = { tool_calls: [{ name: "lookup", arguments: { key: "Paris" } }] };
const PARIS = { city: "Paris", temperature: 22 };

async function run(model: string, env: NodeJS.ProcessEnv): Promise<Report> {
  const result = await cli(["run", tactic, "--model", model, "--input", "Paris", "--json", "--no-stream"], { env: { LLLM_HOME: tempDir("lllm-home-"), LLLM_RETRY_DELAY_MS: "1", OPENAI_API_KEY: "", ...env } });
  expect(result.stderr).toBe("");
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Report;
}

describe("structured output (`output:`) on every provider", () => {
  it("OpenAI-compatible: response_format json_schema, one repair turn on a mismatch", async () => {
    const server = await startMockOpenAIServer({ script: [lookup, '{"city": "Paris"}', JSON.stringify(PARIS)] });
    closers.push(() => server.close());
    const report = await run("gpt-test", { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url });
    expect(report).toMatchObject({ output: PARIS, usage: { llm_calls: 3 } });
    const first = server.requests[0]!.body;
    expect(first["response_format"]).toMatchObject({ type: "json_schema", json_schema: { name: "weather_report", schema: { required: ["city", "temperature"] } } });
    const repair = (server.requests[2]!.body.messages as Array<{ role: string; content: string }>).at(-1)!;
    expect(repair.content).toMatch(/^Error: the JSON does not match the output schema: .*temperature.*\. Please fix\.$/);
  }, 300_000);

  it("Anthropic: a forced answer tool (final_answer, after the other tools), one repair turn on a mismatch", async () => {
    const server = await startMockAnthropicServer({ script: [lookup, { tool_calls: [{ name: "final_answer", arguments: { city: "Paris" } }] }, { tool_calls: [{ name: "final_answer", arguments: PARIS }] }] });
    closers.push(() => server.close());
    const report = await run("anthropic/claude-test", { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url });
    expect(report).toMatchObject({ output: PARIS, usage: { llm_calls: 3 } });
    const first = server.requests[0]!.body as Block;
    // With other tools offered, the model must call one of them: in the end, the answer tool.
    expect(first["tool_choice"]).toEqual({ type: "any" });
    expect((first["tools"] as Block[]).map((tool) => tool["name"])).toEqual(["lookup", "final_answer"]);
    expect((first["tools"] as Block[])[1]).toMatchObject({ input_schema: { required: ["city", "temperature"] } });
    const messages = (server.requests[2]!.body as Block)["messages"] as Array<{ role: string; content: Block[] }>;
    expect(messages.at(-1)!.content.at(-1)).toMatchObject({ type: "text", text: expect.stringMatching(/^Error: the JSON does not match the output schema: .*temperature.*\. Please fix\.$/) });
  }, 300_000);

  it("Gemini: the schema as an instruction while tools are offered (Gemini takes no responseSchema with functions), responseSchema without; one repair turn", async () => {
    const server = await startMockGeminiServer({ script: [lookup, '{"city": "Paris"}', JSON.stringify(PARIS)] });
    closers.push(() => server.close());
    const report = await run("gemini/gemini-test", { GEMINI_API_KEY: "k", GEMINI_BASE_URL: server.url });
    expect(report).toMatchObject({ output: PARIS, usage: { llm_calls: 3 } });
    const first = server.requests[0]!.body as Block;
    expect(first["generationConfig"]).toBeUndefined();
    expect(JSON.stringify(first["systemInstruction"])).toContain("reply with only a JSON value that matches this JSON Schema");
    const repair = ((server.requests[2]!.body as Block)["contents"] as Array<{ parts: Block[] }>).at(-1)!.parts.at(-1)!;
    expect(String(repair["text"])).toMatch(/^Error: the JSON does not match the output schema: .*temperature.*\. Please fix\.$/);

    // Without tools (the output fixture of the run tests), the schema goes as responseSchema.
    const plain = await startMockGeminiServer({ script: [JSON.stringify(PARIS)] });
    closers.push(() => plain.close());
    const result = await cli(["run", path.join(ROOT, "test/fixtures/run/output.yaml"), "--model", "gemini/gemini-test", "--input", "Paris", "--json"], { env: { GEMINI_API_KEY: "k", GEMINI_BASE_URL: plain.url, LLLM_HOME: tempDir("lllm-home-") } });
    expect((JSON.parse(result.stdout) as Report).output).toEqual(PARIS);
    expect((plain.requests[0]!.body as Block)["generationConfig"]).toMatchObject({ responseMimeType: "application/json", responseSchema: { type: "OBJECT" } });
  }, 300_000);
});
