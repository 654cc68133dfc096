import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type InjectedFailure, type MockOpenAIServer, type ScriptedTurn } from "../../src/testing/index.js";
import { runCli, type CliResult } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { freePort } from "../helpers/freePort.js";
import { leaksOf } from "../helpers/secretEncodings.js";

// Some cases spawn the CLI, some several times: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

/**
 * What a user sees when a provider misbehaves, through the CLI against a local mock server. Most cases run the CLI's
 * main() in this process (what it prints does not depend on being a process of its own); a run that must not print
 * the key, and `validate`, go end to end through the built CLI.
 */

let server: MockOpenAIServer | undefined;
const folders: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A one-agent tactic; `extra` lines go into the agent's config. */
function tactic(extra: string[] = []): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-provider-cli-"));
  folders.push(dir);
  const file = path.join(dir, "t.yaml");
  writeFileSync(file, ["name: t", 'prompt: "{input}"', "agent_configs:", "  - name: a", "    model_name: gpt-test", "    system_prompt: Be brief.", ...extra.map((line) => `    ${line}`), ""].join("\n"));
  return file;
}

/** `lllm run` of a one-agent tactic against the mock server, in this process unless `cli` is `runCli`. */
async function run(args: string[], failures: InjectedFailure[], script: ScriptedTurn[], env: NodeJS.ProcessEnv = {}, extra: string[] = [], cli = runCliInProcess): Promise<CliResult> {
  server = await startMockOpenAIServer({ failures, script });
  return cli(["run", tactic(extra), "--input", "hi", ...args], { env: { OPENAI_API_KEY: "sk-test-key-000000", OPENAI_BASE_URL: server.url, LLLM_RETRY_DELAY_MS: "1", ...env } });
}

function posts(): number {
  return server!.requests.filter((request) => request.method === "POST").length;
}

describe("lllm run: the provider's key is never printed (9.4)", () => {
  const key = "sk-proj+Secret/Key=0123456789abcdef";
  const echoed = `Incorrect API key provided: Bearer ${key}; also ${encodeURIComponent(key)} and ${Buffer.from(`user:${key}`).toString("base64")}`;

  it("not on stderr, not with --verbose (stack and causes), not in --json output", async () => {
    for (const args of [[], ["--verbose"], ["--json"], ["--json", "--verbose"]]) {
      // The first end to end: nothing the process prints (a stack, a cause) may hold the key.
      const result = await run(args, [{ status: 401, message: echoed }], [], { OPENAI_API_KEY: key }, [], args.length === 0 ? runCli : runCliInProcess);
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.stderr).toContain("Incorrect API key provided: Bearer [redacted]");
      expect(leaksOf(result.stdout, key)).toEqual([]);
      expect(leaksOf(result.stderr, key)).toEqual([]);
      await server!.close();
    }
  }, 120_000);
});

describe("lllm run: an incomplete or broken answer never exits 0 (9.11, 9.12)", () => {
  it("a stream that ends without finish_reason or [DONE] fails after the partial text", async () => {
    const result = await run(["--stream"], [{ cut: "end_early" }], ["A partial answer that goes on."]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toContain("A partial answer");
    expect(result.stderr).toContain("ended before it was complete");
    expect(result.stderr).toContain("only part of the answer");
    expect(result.stderr).not.toContain("internal error");
  });

  it("a connection reset mid-stream is a provider error (exit 1), not an internal error", async () => {
    const result = await run(["--stream"], [{ cut: "reset_mid_answer" }], ["Part one, part two, part three, part four."]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("lost the connection");
    expect(result.stderr).not.toContain("internal error");
  });

  const broken: Array<[string, InjectedFailure, string]> = [
    ["an empty choices list", { body: JSON.stringify({ id: "x", choices: [] }) }, "empty `choices` list"],
    ["null content", { body: JSON.stringify({ id: "x", choices: [{ index: 0, message: { role: "assistant", content: null }, finish_reason: "stop" }] }) }, "no text and no tool calls"],
    ["an HTML page", { body: "<html><body>Bad gateway</body></html>", contentType: "text/html" }, "not JSON but text"],
    ["truncated JSON", { body: '{"id": "x", "choices": [{"mess' }, "not valid JSON"],
    ["a connection reset", { cut: "reset" }, "cannot reach"],
  ];
  for (const [what, failure, says] of broken) {
    it(`${what}, every time: exit 1 with a plain provider error after the retries`, async () => {
      const result = await run(["--no-stream"], Array.from({ length: 5 }, () => failure), []);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(says);
      expect(result.stderr).not.toContain("internal error");
      expect(posts()).toBe(5);
    });
  }

  it("a JSON body sent to a streaming request is not an empty success", async () => {
    const body = JSON.stringify({ id: "x", choices: [{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" }] });
    const result = await run(["--stream"], Array.from({ length: 5 }, () => ({ body })), []);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("ended before it was complete");
  });
});

describe("lllm run: retries are told on stderr, and what cannot succeed is not retried (10.6)", () => {
  it("--verbose says each retry: attempt n/N, cause and wait", async () => {
    const result = await run(["--verbose", "--no-stream"], [{ status: 500 }, { status: 503 }], ["Fine."]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("Fine.\n");
    expect(result.stderr).toMatch(/attempt 1\/5 failed \(HTTP 500: The server had an error while processing your request\.\); trying again in \d+\.\d s/);
    expect(result.stderr).toMatch(/attempt 2\/5 failed \(HTTP 503: The server is overloaded\.\)/);
  });

  it("a long server message in a retry notice is cut at 100 characters of its text, never inside an escape or a character", async () => {
    const escape = `${"x".repeat(97)}\u001b[2J and more`;
    const emoji = `${"y".repeat(99)}\u{1F600} and more`;
    const result = await run(["--verbose", "--no-stream"], [{ status: 500, message: escape }, { status: 503, message: emoji }], ["Fine."]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`attempt 1/5 failed (HTTP 500: ${"x".repeat(97)}\\u001b[2…); trying again`);
    expect(result.stderr).toContain(`attempt 2/5 failed (HTTP 503: ${"y".repeat(99)}\u{1F600}…); trying again`);
  });

  it("without --verbose, one line once retrying keeps the user waiting", async () => {
    // The server asks for a 3 s wait: long enough to deserve a word without --verbose.
    const result = await run(["--no-stream"], [{ status: 503, retryAfterMs: 3000 }], ["Fine."]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.match(/is failing \(HTTP 503/g)).toHaveLength(1);
    expect(result.stderr).toContain("retrying (attempt 2 of 5");
  });

  it("a short retry without --verbose stays quiet", async () => {
    const result = await run(["--no-stream"], [{ status: 500 }], ["Fine."]);
    expect(result).toMatchObject({ code: 0, stdout: "Fine.\n", stderr: "" });
  });

  it("insufficient_quota is not retried", async () => {
    const result = await run(["--verbose", "--no-stream"], [{ status: 429, code: "insufficient_quota", message: "You exceeded your current quota." }], ["never"]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("You exceeded your current quota.");
    expect(result.stderr).not.toContain("lllm: retry:");
    expect(posts()).toBe(1);
  });

  it("a refused connection to a local server is not retried", async () => {
    const port = await freePort();
    const result = await runCliInProcess(["--verbose", "run", tactic(), "--input", "hi", "--no-stream"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` } });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("ECONNREFUSED");
    expect(result.stderr).not.toContain("lllm: retry:");
    expect(result.stderr).not.toContain("gave up after");
  });
});

describe("the model timeout can be set (9.13)", () => {
  it("--timeout applies to every agent, and the message names the settings", async () => {
    const result = await run(["--timeout", "0.5", "--no-stream"], [{ delayMs: 20_000 }], ["too late"]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("within 0.5 s");
    expect(result.stderr).toContain("`timeout: <seconds>` in the agent's config");
    expect(result.stderr).toContain("lllm run --timeout <seconds>");
  });

  it("an agent's `timeout` key, and model_args.timeout (not sent to the server)", async () => {
    const result = await run(["--no-stream"], [{ delayMs: 20_000 }], ["too late"], {}, ["timeout: 0.5"]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("within 0.5 s");
    const second = await run(["--no-stream"], [], ["Fine."], {}, ["model_args: {timeout: 30, temperature: 0}"]);
    expect(second).toMatchObject({ code: 0, stdout: "Fine.\n" });
    expect(server!.requests[0]!.body).not.toHaveProperty("timeout");
    expect(server!.requests[0]!.body).toHaveProperty("temperature", 0);
  });

  it("a bad --timeout or `timeout` is a usage error (exit 2) that says where", async () => {
    const flag = await runCliInProcess(["run", tactic(), "--input", "hi", "--timeout", "soon"], { env: { OPENAI_API_KEY: "k" } });
    expect(flag.code, flag.stderr).toBe(2);
    expect(flag.stderr).toContain("--timeout must be a number of seconds above 0");
    const key = await runCli(["validate", tactic(["timeout: -1"])]);
    expect(key.code, key.stderr).toBe(2);
    expect(key.stderr).toContain("timeout");
  });
});

describe("lllm run: an answer cut off or withheld is not a success", () => {
  it("an answer cut at the output token limit (finish_reason: length) exits 3 naming max_tokens, and prints no partial answer", async () => {
    for (const stream of ["--no-stream", "--stream"]) {
      const result = await run([stream], [], [{ text: "The weather in Par", finish_reason: "length" }]);
      expect(result.code, result.stderr).toBe(3);
      expect(result.stderr).toContain("cut off at the model's output token limit (finish_reason: length)");
      expect(result.stderr).toContain("max_tokens");
      if (stream === "--no-stream") expect(result.stdout).toBe("");
    }
  });

  it("an answer withheld by the content filter exits 1 and says so", async () => {
    const result = await run(["--json"], [], [{ text: "Partial", finish_reason: "content_filter" }]);
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as { output: unknown; error: { code: string } };
    expect(report.output).toBeNull();
    expect(report.error.code).toBe("answer_filtered");
  });

  it("a key the model repeats is redacted from the streamed answer too, even split across pieces", async () => {
    const key = "sk-test-key-000000";
    const result = await run(["--stream"], [], [`Here it is: ${key}, and more words after it.`]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("Here it is: [redacted], and more words after it.\n");
  });
});
