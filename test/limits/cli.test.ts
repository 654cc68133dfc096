import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropicServer, startMockGeminiServer, startMockOpenAIServer, type MockOpenAIServer, type MockRequestBody, type ScriptedTurn } from "../../src/testing/index.js";
import { ROOT, runCli, type CliResult, type CliOptions } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";

/** A busy machine can take long to start the CLI: a generous limit, since a passing run waits no longer than it must. */
const cli = (args: string[], options: CliOptions = {}): Promise<CliResult> => runCli(args, { timeoutMs: 120_000, ...options });

// `runCliInProcess` (the CLI's main() in this process): what the limits do and say does not depend on being a process
// of its own. One run, `logs` and `validate` go through the built CLI (`cli`), end to end.

/**
 * Limits of a whole run, through the CLI against the mock OpenAI-compatible server. The fixtures' folder holds
 * the project settings (run from there): `gpt-test` costs $100 per million prompt tokens and $400 per million
 * answer tokens, so that a few calls cost dollars.
 */
const fixtures = path.join(ROOT, "test/fixtures/limits");
let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type WireMessage = { role: string; content: string | null };
type Failure = { error: { code: string; message: string; hint: string | null }; limit?: { name: string; value: number; spent: number }; cost: number | null; usage: Usage; limits?: Record<string, number> };
type Usage = { llm_calls: number; by_agent: Record<string, { model_calls: number; cost: number | null; tool_calls: number }>; by_tool: Record<string, { calls: number; model_calls: number; cost: number | null }> };

/** Which agent a request is from, by the first words of its system prompt. */
function agentOf(body: MockRequestBody): string {
  const system = String((body.messages?.[0] as WireMessage | undefined)?.content ?? "");
  return /^You are the (\w+)/.exec(system)?.[1] ?? "?";
}

async function run(tactic: string, answer: (agent: string, messages: WireMessage[]) => ScriptedTurn, args: string[] = []): Promise<CliResult> {
  server = await startMockOpenAIServer({ handler: (body) => answer(agentOf(body), (body.messages ?? []) as WireMessage[]) });
  return runCliInProcess(["run", path.join(fixtures, tactic), "--input", "go", ...args], {
    cwd: fixtures,
    env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.url, LLLM_HOME: tempDir("lllm-home-"), LLLM_RETRY_DELAY_MS: "1" },
  });
}

const callsBy = (agent: string): number => server!.requests.filter((request) => request.method === "POST" && agentOf(request.body) === agent).length;
const lookup = (key: string): ScriptedTurn => ({ tool_calls: [{ name: "lookup", arguments: { key } }] });
/** A model that looks up one new key after another (a repeated call would not run, and would not count). */
function looksUpForever(): () => ScriptedTurn {
  let count = 0;
  return () => lookup(`key ${(count += 1)}`);
}

describe("limits of the whole run", () => {
  it("max_cost over nested tactics and a code-action program stops the run before it crosses the line (exit 3), saying where the money went", async () => {
    let round = 0;
    const result = await run("parent.yaml", (agent, messages) => {
      if (agent === "planner") return { tool_calls: [{ name: round++ % 2 === 0 ? "brief" : "sum", arguments: { task: `part ${round}` } }] };
      if (agent === "brief") return messages.at(-1)?.role === "tool" ? "A short brief." : lookup("k");
      return "```python\nfinal_answer(len([lookup(key=str(i)) for i in range(3)]))\n```";
    }, ["--json"]);
    expect(result.code, result.stderr).toBe(3);
    const report = JSON.parse(result.stdout) as Failure;
    expect(report.error.code).toBe("limit_max_cost");
    expect(report.error.message).toMatch(/^max_cost reached \(\$0\.50, limits\.max_cost of parent\.yaml:3:20\): \$0\.\d+ spent, and the next call to gpt-test needs \$0\.\d+ more \(about [\d,]+ prompt tokens and 50 answer tokens, the least a call is sent with\); stopped before it\./);
    expect(report.limits).toEqual({ max_cost: 0.5 });
    // Stopped before the line: what the answered calls cost is below the cap, and is what the budget counted.
    expect(report.limit!.spent).toBeLessThan(0.5);
    expect(report.cost).toBeCloseTo(report.limit!.spent, 8);
    // Every model call the server answered is counted: the planner's, and those inside both nested tactics.
    const posts = server!.requests.filter((request) => request.method === "POST").length;
    expect(report.usage.llm_calls).toBe(posts);
    expect(Object.keys(report.usage.by_agent).sort()).toEqual(["brief/writer", "planner", "sum/adder"]);
    expect(report.usage.by_agent["planner"]!.model_calls).toBe(callsBy("planner"));
    expect(report.usage.by_agent["brief/writer"]!.model_calls).toBe(callsBy("brief"));
    expect(report.usage.by_agent["sum/adder"]!.model_calls).toBe(callsBy("adder"));
    // The programs' bridged calls count as tool calls, attributed to the agent that wrote the program.
    const programs = callsBy("adder");
    expect(programs).toBeGreaterThan(0);
    expect(report.usage.by_agent["sum/adder"]!.tool_calls).toBe(programs * 3);
    expect(report.usage.by_tool["sum"]).toMatchObject({ model_calls: programs });
    expect(report.usage.by_tool["lookup"]!.calls).toBe(programs * 3 + report.usage.by_agent["brief/writer"]!.tool_calls);
    const inside = (report.usage.by_tool["brief"]!.cost ?? 0) + (report.usage.by_tool["sum"]!.cost ?? 0);
    expect(inside + (report.usage.by_agent["planner"]!.cost ?? 0)).toBeCloseTo(report.cost!, 8);
    expect(result.stderr).toContain("lllm: error: max_cost reached");
  }, 300_000);

  it("a nested tactic's agent has one name everywhere: `brief/writer` in by_agent, tool_calls, model_calls and the run store", async () => {
    const home = tempDir("lllm-home-");
    server = await startMockOpenAIServer({
      handler: (body) => {
        const messages = (body.messages ?? []) as WireMessage[];
        if (agentOf(body) === "planner") return messages.at(-1)?.role === "tool" ? "Briefed." : { tool_calls: [{ name: "brief", arguments: { task: "rain" } }] };
        return messages.at(-1)?.role === "tool" ? "A short brief." : lookup("rain");
      },
    });
    const result = await cli(["run", path.join(fixtures, "parent.yaml"), "--input", "go", "--json"], { cwd: fixtures, env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: home } });
    expect(result.code, result.stderr).toBe(0);
    type Named = { agent: string; name?: string };
    const report = JSON.parse(result.stdout) as { tool_calls: Named[]; model_calls: Named[]; usage: Usage };
    expect(report.tool_calls.map((call) => `${call.agent}:${call.name}`)).toEqual(["brief/writer:lookup", "planner:brief"]);
    expect(report.model_calls.map((call) => call.agent)).toEqual(["planner", "brief/writer", "brief/writer", "planner"]);
    expect(Object.keys(report.usage.by_agent).sort()).toEqual(["brief/writer", "planner"]);
    const stored = JSON.parse((await cli(["logs", "show", "last", "--json"], { env: { LLLM_HOME: home } })).stdout) as { tool_calls: Named[]; model_calls: Named[] };
    expect(stored.tool_calls.map((call) => call.agent)).toEqual(["brief/writer", "planner"]);
    expect(stored.model_calls.map((call) => call.agent)).toEqual(["planner", "brief/writer", "brief/writer", "planner"]);
  }, 300_000);

  it("a limit reached inside a nested tactic stops the whole run: the parent does not read it as a failed tool", async () => {
    const next = looksUpForever();
    const result = await run("tight-parent.yaml", (agent) => (agent === "planner" ? { tool_calls: [{ name: "tight", arguments: { task: "go" } }] } : next()), ["--json"]);
    expect(result.code, result.stderr).toBe(3);
    const report = JSON.parse(result.stdout) as Failure;
    expect(report.error.code).toBe("limit_max_tool_calls");
    expect(report.error.message).toContain("max_tool_calls reached (1 tool call, limits.max_tool_calls of ");
    expect(report.error.message).toContain("`lookup` (agent `tight/writer`) was not run");
    expect(callsBy("planner")).toBe(1); // never asked again with an error to read
    expect(report.usage.by_tool["lookup"]!.calls).toBe(1);
  }, 300_000);

  it("--max-tool-calls, --max-tokens and --max-duration stop a plain tool loop (exit 3); the run store keeps where the spend went", async () => {
    const calls = await run("loop.yaml", looksUpForever(), ["--max-tool-calls", "3", "--max-steps", "50"]);
    expect(calls.code, calls.stderr).toBe(3);
    expect(calls.stderr).toContain("lllm: error: max_tool_calls reached (3 tool calls, --max-tool-calls): the run has made 3 tool calls, its limit; `lookup` (agent `bot`) was not run.");
    expect(calls.stderr).toContain("by tool: lookup 3 calls");
    expect(calls.stderr).toContain("Raise the limit (--max-tool-calls), or give the run less to do.");

    const tokens = await run("loop.yaml", looksUpForever(), ["--max-tokens", "2000", "--max-steps", "50", "--json"]);
    expect(tokens.code, tokens.stderr).toBe(3);
    const report = JSON.parse(tokens.stdout) as Failure & { usage: { total_tokens: number } };
    expect(report.error.code).toBe("limit_max_tokens");
    expect(report.usage.total_tokens).toBeLessThanOrEqual(2000);

    server = await startMockOpenAIServer({ script: [lookup("a")], failures: [{ delayMs: 60_000 }] });
    const home = tempDir("lllm-home-");
    const slow = await runCliInProcess(["run", path.join(fixtures, "loop.yaml"), "--input", "go", "--max-duration", "1"], { cwd: fixtures, env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: home } });
    expect(slow.code, slow.stderr).toBe(3);
    expect(slow.stderr).toMatch(/lllm: error: max_duration reached \(1 s, --max-duration\): the run has taken \d+(\.\d)? s/);
    // At least the limit; how much more is the machine's (a busy one runs the timer late).
    expect(Number(/the run has taken ([\d.]+) s/.exec(slow.stderr)?.[1])).toBeGreaterThanOrEqual(1);
    const shown = await runCliInProcess(["logs", "show", "last"], { env: { LLLM_HOME: home } });
    expect(shown.stdout).toContain("limits max_duration 1");
    expect(shown.stdout).toContain("budget (exit 3)");

  }, 300_000);

  it("lllm logs show lists the limits and the spend by agent and by tool", async () => {
    server = await startMockOpenAIServer({ script: [lookup("a"), lookup("b"), "Done."] });
    const home = tempDir("lllm-home-");
    const env = { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, LLLM_HOME: home };
    const result = await runCliInProcess(["run", path.join(fixtures, "loop.yaml"), "--input", "go", "--max-cost", "5"], { cwd: fixtures, env });
    expect(result.code, result.stderr).toBe(0);
    const shown = await runCliInProcess(["logs", "show", "last"], { env: { LLLM_HOME: home } });
    expect(shown.stdout).toContain("limits max_cost 5");
    expect(shown.stdout).toMatch(/agent bot: 3 model calls, \d+ tokens, \$0\.\d+, 2 tool calls/);
    expect(shown.stdout).toContain("tool lookup: 2 calls");
    const json = JSON.parse((await runCliInProcess(["logs", "show", "last", "--json"], { env: { LLLM_HOME: home } })).stdout) as { details: { spend: { by_agent: Record<string, unknown>; by_tool: Record<string, unknown>; limits: unknown } } };
    expect(json.details.spend.limits).toEqual({ max_cost: 5 });
    expect(Object.keys(json.details.spend.by_tool)).toEqual(["lookup"]);
  }, 300_000);
});

describe("limits with calls in parallel", () => {
  it("five sub-agents at once under --max-tokens: every answered call is in usage.total_tokens, and the total stays under the cap", async () => {
    // Realistic usage: a prompt is a quarter of the characters sent; a summary is 350 tokens (of the 400 allowed).
    const served: number[] = [];
    let rounds = 0;
    const result = await run("crew.yaml", (agent, messages) => {
      const prompt = Math.ceil(JSON.stringify(messages).length / 4) + 40;
      const turn: ScriptedTurn =
        agent === "lead"
          ? { tool_calls: Array.from({ length: 5 }, (_, index) => ({ name: "summarizer", arguments: { input: `Summarize part ${rounds}.${index} of the report.` } })), usage: { prompt_tokens: prompt, completion_tokens: 80 } }
          : { text: "A summary of the part.", usage: { prompt_tokens: prompt, completion_tokens: 350 } };
      if (agent === "lead") rounds += 1;
      served.push(prompt + (agent === "lead" ? 80 : 350));
      return turn;
    }, ["--max-tokens", "2000", "--json"]);
    expect(result.code, result.stderr).toBe(3);
    const report = JSON.parse(result.stdout) as Failure & { usage: { total_tokens: number } };
    expect(report.error.code).toBe("limit_max_tokens");
    const billed = served.reduce((sum, tokens) => sum + tokens, 0);
    // The last answered call is counted too (the one that may have brought the total to the line).
    expect(report.usage.total_tokens).toBe(billed);
    expect(report.usage.llm_calls).toBe(served.length);
    // Each call held its prompt and its 400-token answer room before it went: together they stay under the cap.
    expect(report.usage.total_tokens).toBeLessThanOrEqual(2000);
    expect(report.usage.by_agent["summarizer"]!.model_calls + report.usage.by_agent["lead"]!.model_calls).toBe(served.length);
  }, 300_000);
});

describe("limits on the native providers", () => {
  it("max_cost stops a run on Anthropic and on Gemini before it crosses the line (their mocks)", async () => {
    const turns = Array.from({ length: 40 }, (_, index) => lookup(`key ${index}`));
    const anthropic = await startMockAnthropicServer({ script: turns });
    const gemini = await startMockGeminiServer({ script: turns });
    try {
      for (const [model, env] of [
        ["anthropic/claude-test", { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: anthropic.url }],
        ["gemini/gemini-test", { GEMINI_API_KEY: "k", GEMINI_BASE_URL: gemini.url }],
      ] as const) {
        const result = await runCliInProcess(["run", path.join(fixtures, "loop.yaml"), "--model", model, "--input", "go", "--max-cost", "0.2", "--max-steps", "50", "--json", "--no-stream"], { cwd: fixtures, env: { ...env, LLLM_HOME: tempDir("lllm-home-") } });
        expect(result.code, model).toBe(3);
        const report = JSON.parse(result.stdout) as Failure;
        expect(report.error.code, model).toBe("limit_max_cost");
        expect(report.error.message, model).toContain(`the next call to ${model} needs $`);
        expect(report.limit!.spent, model).toBeLessThan(0.2);
        expect(report.usage.by_agent["bot"]!.model_calls, model).toBeGreaterThan(1);
      }
    } finally {
      await Promise.all([anthropic.close(), gemini.close()]);
    }
  }, 300_000);
});

describe("bad limits", () => {
  it("a model without a price under max_cost is an error before the run starts (exit 2), at the model's line", async () => {
    server = await startMockOpenAIServer({ script: ["never"] });
    const result = await runCliInProcess(["run", path.join(fixtures, "loop.yaml"), "--input", "go", "--max-cost", "1", "--model", "my-private-model"], { cwd: fixtures, env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("lllm: error: --model: model `my-private-model` has no known price, so --max-cost cannot count what it costs");
    expect(result.stderr).toContain('prices: {"my-private-model": {input:');
    expect(server.requests).toHaveLength(0);
  }, 300_000);

  it("validate reports a negative, a non-numeric and an unknown limit with file:line:col (exit 2), and an unpriced model under the tactic's own max_cost", async () => {
    const dir = tempDir("lllm-limits-");
    const { writeFileSync } = await import("node:fs");
    const file = path.join(dir, "bad.yaml");
    writeFileSync(file, "name: bad\nlimits:\n  max_cost: -1\n  max_tokens: lots\n  max_calls: 3\nglobal:\n  model_name: gpt-test\nagent_configs:\n  - name: a\n    system_prompt: hi\n");
    const result = await cli(["validate", file], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("bad.yaml:3:13: limits.max_cost must be greater than 0 (got -1)");
    expect(result.stderr).toContain('bad.yaml:4:15: limits.max_tokens must be an integer (got "lots")');
    expect(result.stderr).toContain("bad.yaml:5:3: unknown key `max_calls` in limits");

    const unpriced = path.join(dir, "unpriced.yaml");
    writeFileSync(unpriced, "name: unpriced\nlimits: {max_cost: 1}\nagent_configs:\n  - name: a\n    model_name: [gpt-4o-mini, ollama/llama3.1]\n    system_prompt: hi\n");
    const priced = await runCliInProcess(["validate", unpriced], { cwd: dir });
    expect(priced.code, priced.stderr).toBe(2);
    expect(priced.stderr).toContain("lllm: error: unpriced.yaml:5:31: model `ollama/llama3.1` has no known price, so limits.max_cost of unpriced.yaml:2:20 cannot count what it costs");
  }, 300_000);

  it("a limit flag that is not a positive number is a usage error (exit 2)", async () => {
    for (const [flag, value] of [["--max-cost", "-0.5"], ["--max-tokens", "1.5"], ["--max-tool-calls", "many"], ["--max-duration", "0"]] as const) {
      const result = await runCliInProcess(["run", path.join(fixtures, "loop.yaml"), "--input", "go", flag, value], { cwd: fixtures });
      expect(result.code, flag).toBe(2);
      expect(result.stderr, flag).toMatch(new RegExp(`^lllm: error: ${flag} must be `));
    }
  }, 300_000);
});
