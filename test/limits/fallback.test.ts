import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropicServer, startMockGeminiServer, startMockOpenAIServer, type MockAnthropicServer, type MockGeminiServer, type MockOpenAIServer, type ScriptedTurn } from "../../src/testing/index.js";
import { freePort } from "../helpers/freePort.js";
import { ROOT, runCli, type CliOptions, type CliResult } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";

/** A busy machine can take long to start the CLI: a generous limit, since a passing run waits no longer than it must. */
const cli = (args: string[], options: CliOptions = {}): Promise<CliResult> => runCli(args, { timeoutMs: 120_000, ...options });

// `runCliInProcess` (the CLI's main() in this process): which model answers, and what is said about it, does not depend
// on being a process of its own. The first case's run and `logs`, and a `validate`, go through the built CLI (`cli`),
// end to end.

/**
 * Model fallback through the CLI: a chain whose first model's provider fails (the mock OpenAI-compatible server)
 * and whose next ones answer (the Anthropic and Gemini mocks), with the same dialog.
 */
const fixtures = path.join(ROOT, "test/fixtures/limits");
let openai: MockOpenAIServer | undefined;
let anthropic: MockAnthropicServer | undefined;
let gemini: MockGeminiServer | undefined;
afterEach(async () => {
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
  openai = anthropic = gemini = undefined;
});

type Block = Record<string, unknown>;
const lookup: ScriptedTurn = { tool_calls: [{ name: "lookup", arguments: { key: "paris" } }] };
const posts = (server: { requests: Array<{ method: string }> } | undefined): number => server?.requests.filter((request) => request.method === "POST").length ?? 0;

/** A tactic whose agent's model is the chain `models` (a `model_name` list), with the agent's `invoker_config` if given. */
function chainTactic(models: string[], invokerConfig?: Record<string, string>): string {
  const dir = tempDir("lllm-chain-");
  const file = path.join(dir, "chain.yaml");
  const invoker = invokerConfig ? `    invoker_config: ${JSON.stringify(invokerConfig)}\n` : "";
  writeFileSync(file, `name: chain\npackages: [${path.join(fixtures, "runtree")}]\nagent_configs:\n  - name: bot\n    model_name: ${JSON.stringify(models)}\n${invoker}    system_prompt: You are the bot.\n    tools: [lookup]\n`);
  return file;
}

/** Every header value of every request a mock received, joined: where a key would show if it was sent there. */
const headersOf = (server: { requests: Array<{ headers: Record<string, string | string[] | undefined> }> }): string => server.requests.map((request) => JSON.stringify(request.headers)).join("\n");

function env(home = tempDir("lllm-home-")): NodeJS.ProcessEnv {
  return {
    OPENAI_API_KEY: "sk-openai-test",
    OPENAI_BASE_URL: openai?.url ?? "http://127.0.0.1:9/v1",
    ANTHROPIC_API_KEY: "sk-ant-test",
    ANTHROPIC_BASE_URL: anthropic?.url ?? "http://127.0.0.1:9",
    GEMINI_API_KEY: "AIza-test",
    GEMINI_BASE_URL: gemini?.url ?? "http://127.0.0.1:9",
    LLLM_HOME: home,
    LLLM_RETRY_DELAY_MS: "1",
  };
}

describe("a model_name list is a fallback chain", () => {
  it("the next model answers once the first provider fails past its retries, with the dialog so far; stderr says so once; --json and the run store say which model served each call", async () => {
    // The OpenAI model answers the first call, then its server fails with 503 on every attempt of the second.
    openai = await startMockOpenAIServer({
      handler: () => {
        openai!.injectFailure(...Array.from({ length: 5 }, () => ({ status: 503, message: "The server is overloaded." })));
        return lookup;
      },
    });
    anthropic = await startMockAnthropicServer({ script: [{ tool_calls: [{ name: "lookup", arguments: { key: "rome" } }] }, "Paris and Rome."] });
    const home = tempDir("lllm-home-");
    const result = await cli(["run", chainTactic(["gpt-test", "anthropic/claude-test"]), "--input", "Facts?", "--json"], { env: env(home) });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { output: string; model_calls: Array<{ agent: string; model: string }> };
    expect(report.output).toBe("Paris and Rome.");
    expect(report.model_calls.map((call) => call.model)).toEqual(["gpt-test", "anthropic/claude-test", "anthropic/claude-test"]);
    // Once: the chain stays with the model that answered, and the failed provider is not asked (and retried) again.
    const said = result.stderr.split("\n").filter((line) => line.includes("answers instead of"));
    expect(said).toEqual([expect.stringMatching(/^lllm: warning: anthropic\/claude-test answers instead of gpt-test from now on \(gpt-test: .*503.*\)$/)]);
    expect(posts(openai)).toBe(6);
    expect(posts(anthropic)).toBe(2);
    // The dialog carried over: Anthropic got the user's question, the OpenAI model's tool call and its result.
    const messages = (anthropic.requests[0]!.body as Block)["messages"] as Array<{ role: string; content: Block[] }>;
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(messages[1]!.content[0]).toMatchObject({ type: "tool_use", name: "lookup", input: { key: "paris" } });
    expect(messages[2]!.content[0]).toMatchObject({ type: "tool_result", content: expect.stringContaining("fact paris") });
    const shown = await cli(["logs", "show", "last"], { env: { LLLM_HOME: home } });
    expect(shown.stdout).toMatch(/model call 1 · bot · round 1 · gpt-test /);
    expect(shown.stdout).toMatch(/model call 2 · bot · round 2 · anthropic\/claude-test /);
  }, 300_000);

  it("falls over two providers: a refused connection, then an overloaded server, then Gemini answers", async () => {
    anthropic = await startMockAnthropicServer({ failures: Array.from({ length: 5 }, () => ({ status: 529, message: "Overloaded" })) });
    gemini = await startMockGeminiServer({ script: ["From Gemini."] });
    const closedPort = await freePort();
    const result = await runCliInProcess(["run", chainTactic(["gpt-test", "anthropic/claude-test", "gemini/gemini-test"]), "--input", "Hi", "--no-stream"], {
      env: { ...env(), OPENAI_BASE_URL: `http://127.0.0.1:${closedPort}/v1` },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("From Gemini.\n");
    expect(result.stderr).toMatch(/lllm: warning: gemini\/gemini-test answers instead of gpt-test from now on \(gpt-test: cannot reach .*; anthropic\/claude-test: .*529.*\)/);
    expect(posts(anthropic)).toBe(5);
  }, 300_000);

  it("a model that does not answer within the timeout, or a 429 past the retries, falls back too", async () => {
    openai = await startMockOpenAIServer({ script: ["never"], failures: Array.from({ length: 5 }, () => ({ delayMs: 60_000 })) });
    anthropic = await startMockAnthropicServer({ script: ["From Claude."] });
    // --timeout holds for the fallback's call too: 5 s, so that its answer is in time on a busy machine.
    const result = await runCliInProcess(["run", chainTactic(["gpt-test", "anthropic/claude-test"]), "--input", "Hi", "--timeout", "5", "--json", "--no-stream"], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { output: string; model_calls: Array<{ model: string }> }).model_calls.map((call) => call.model)).toEqual(["anthropic/claude-test"]);
    expect(result.stderr).toMatch(/^lllm: warning: anthropic\/claude-test answers instead of gpt-test from now on \(gpt-test: no answer from .* within 5 s\)\n$/);
    await Promise.all([openai.close(), anthropic.close()]);

    // A 429 that the retries did not mend: the next model answers.
    openai = await startMockOpenAIServer({ script: ["never"], failures: Array.from({ length: 5 }, () => ({ status: 429, message: "Rate limit reached for requests" })) });
    anthropic = await startMockAnthropicServer({ script: ["From Claude."] });
    const limited = await runCliInProcess(["run", chainTactic(["gpt-test", "anthropic/claude-test"]), "--input", "Hi", "--no-stream"], { env: env() });
    expect(limited.code, limited.stderr).toBe(0);
    expect(limited.stdout).toBe("From Claude.\n");
    expect(limited.stderr).toMatch(/^lllm: warning: anthropic\/claude-test answers instead of gpt-test from now on \(gpt-test: .*rate limited \(429\).*gave up after 5 attempts.*\)\n$/);
    expect(posts(openai)).toBe(5);
  }, 300_000);

  it("an auth or bad-request error is the user's to fix: no fallback", async () => {
    for (const status of [401, 400]) {
      openai = await startMockOpenAIServer({ failures: [{ status, message: status === 401 ? "Incorrect API key provided." : "Invalid value for 'temperature'." }] });
      anthropic = await startMockAnthropicServer({ script: ["never"] });
      const result = await runCliInProcess(["run", chainTactic(["gpt-test", "anthropic/claude-test"]), "--input", "Hi", "--json"], { env: env() });
      expect(result.code, String(status)).toBe(1);
      expect((JSON.parse(result.stdout) as { error: { code: string } }).error.code).toBe(status === 401 ? "provider_auth" : "provider_http");
      expect(posts(anthropic), String(status)).toBe(0);
      expect(result.stderr).not.toContain("answers instead of");
      await Promise.all([openai.close(), anthropic.close()]);
    }
    openai = anthropic = undefined;
  }, 300_000);

  it("an answer already streamed in part does not fall back (it would be printed twice)", async () => {
    openai = await startMockOpenAIServer({ script: ["A long answer that is cut in the middle."], failures: [{ cut: "reset_mid_answer" }] });
    anthropic = await startMockAnthropicServer({ script: ["never"] });
    const result = await runCliInProcess(["run", chainTactic(["gpt-test", "anthropic/claude-test"]), "--input", "Hi", "--stream"], { env: env() });
    expect(result.code, result.stderr).toBe(1);
    expect(posts(anthropic)).toBe(0);
  }, 300_000);

  it("an agent's base_url is its first model's: a fallback goes to its own provider with its own key, never to that server", async () => {
    // The agent's own server (base_url) fails; the Anthropic fallback must go to ANTHROPIC_BASE_URL, not to it.
    const own = await startMockOpenAIServer({ failures: Array.from({ length: 5 }, () => ({ status: 503 })) });
    anthropic = await startMockAnthropicServer({ script: ["From Claude."] });
    try {
      const result = await runCliInProcess(["run", chainTactic(["gpt-test", "anthropic/claude-test"], { base_url: own.url }), "--input", "Hi", "--no-stream"], { env: env() });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe("From Claude.\n");
      expect(posts(own)).toBe(5);
      expect(headersOf(own)).not.toContain("sk-ant-test");
      expect(posts(anthropic)).toBe(1);
      expect(JSON.stringify(anthropic.requests.find((request) => request.method === "POST")!.headers)).toContain("sk-ant-test");
    } finally {
      await own.close();
    }
  }, 300_000);

  it("--model of another provider goes to that provider with its key, never to the base_url the file wrote for its own model", async () => {
    const own = await startMockOpenAIServer({ script: ["From the file's server."] });
    anthropic = await startMockAnthropicServer({ script: ["From Claude."] });
    try {
      const tactic = chainTactic(["gpt-test"], { base_url: own.url });
      const result = await runCliInProcess(["run", tactic, "--model", "anthropic/claude-test", "--input", "Hi", "--no-stream"], { env: env() });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe("From Claude.\n");
      expect(own.requests).toHaveLength(0);
      expect(JSON.stringify(anthropic.requests.find((request) => request.method === "POST")!.headers)).toContain("sk-ant-test");
      // Another model on the file's own server keeps it.
      const same = await runCliInProcess(["run", tactic, "--model", "gpt-other", "--input", "Hi", "--no-stream"], { env: env() });
      expect(same.code, same.stderr).toBe(0);
      expect(same.stdout).toBe("From the file's server.\n");
      expect(posts(own)).toBe(1);
    } finally {
      await own.close();
    }
  }, 300_000);

  it("an agent's api_key_env is its first model's, and a provider's own key variable goes to that provider's server only (exit 2 before any call)", async () => {
    openai = await startMockOpenAIServer({ script: ["never"] });
    // [gpt-4o-mini, openrouter/x] with OPENROUTER_API_KEY: it would send the OpenRouter key to the OpenAI URL.
    const result = await runCliInProcess(["run", chainTactic(["gpt-test", "openrouter/meta/llama-3-8b"], { api_key_env: "OPENROUTER_API_KEY" }), "--input", "Hi"], { env: { ...env(), OPENROUTER_API_KEY: "sk-or-secret-1234" } });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`lllm: error: invoker_config.api_key_env names OPENROUTER_API_KEY, the key of \`openrouter/\` models, but model \`gpt-test\` is sent to ${openai.url}`);
    expect(result.stderr).not.toContain("sk-or-secret");
    expect(openai.requests).toHaveLength(0);
    // With the key written beside the server it is for, the user said where it goes.
    const besides = await runCliInProcess(["run", chainTactic(["gpt-test"], { api_key_env: "OPENROUTER_API_KEY", base_url: openai.url }), "--input", "Hi", "--no-stream"], { env: { ...env(), OPENROUTER_API_KEY: "sk-or-secret-1234" } });
    expect(besides.code, besides.stderr).toBe(0);
    expect(openai.requests[0]!.headers["authorization"]).toBe("Bearer sk-or-secret-1234");
  }, 300_000);

  it("validate checks every model of the chain (exit 2 at its line) and shows the chain", async () => {
    const dir = tempDir("lllm-chain-");
    const bad = path.join(dir, "bad.yaml");
    writeFileSync(bad, "name: bad\nglobal:\n  model_name: gpt-4o-mini\n  fallback_models: [antropic/claude-haiku-4-5]\nagent_configs:\n  - name: a\n    system_prompt: hi\n");
    const result = await cli(["validate", bad], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("lllm: error: bad.yaml:4:21: agent `a`: model `antropic/claude-haiku-4-5`: unknown provider prefix `antropic/`; did you mean `anthropic/`?");
    // A well-formed name the price table does not know may be a new model: a warning at its line (exit 0), naming
    // the near ones, for every model of the chain.
    const typo = path.join(dir, "typo.yaml");
    writeFileSync(typo, "name: typo\nglobal:\n  model_name: [gpt-4o-mini, anthropic/claude-haiku-4-55]\n  fallback_models: [gemini/gemini-2.5-flsh]\nagent_configs:\n  - name: a\n    system_prompt: hi\n");
    const warned = await runCliInProcess(["validate", typo], { cwd: dir });
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.stderr).toContain("lllm: warning: typo.yaml:3:29: model `anthropic/claude-haiku-4-55` is not in lllm's model table");
    expect(warned.stderr).toContain("lllm: warning: typo.yaml:4:21: model `gemini/gemini-2.5-flsh` is not in lllm's model table");
    expect(warned.stderr).toContain("did you mean `gemini/gemini-2.5-flash`");
    const good = chainTactic(["gpt-4o-mini", "anthropic/claude-haiku-4-5", "ollama/llama3.1"]);
    const valid = await runCliInProcess(["validate", good]);
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.stdout).toContain("    model: gpt-4o-mini -> anthropic/claude-haiku-4-5 -> ollama/llama3.1\n");
    const json = JSON.parse((await runCliInProcess(["validate", good, "--json"])).stdout) as { agents: Array<{ model: string; fallback_models: string[] }> };
    expect(json.agents[0]).toMatchObject({ model: "gpt-4o-mini", fallback_models: ["anthropic/claude-haiku-4-5", "ollama/llama3.1"] });
    // --model names the one model of every agent: the file's chain goes.
    const overridden = await runCliInProcess(["validate", good, "--model", "gpt-4o", "--json"]);
    expect((JSON.parse(overridden.stdout) as { agents: Array<Record<string, unknown>> }).agents[0]!["fallback_models"]).toBeUndefined();
  }, 300_000);
});
