import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { runCli, type CliResult } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { leaksOf } from "../helpers/secretEncodings.js";
import { tempDir } from "../helpers/tempTree.js";

// Issue 19 item 14: a password in a base URL (`http://user:pass@host/v1`) was printed in the retry notice and the
// error, and kept in logs.db, whence `logs show` and `logs --json` printed it again. The userinfo of a URL is now
// masked wherever lllm prints or stores text, and its password is a secret like a key (every encoding).
const PASSWORD = "pa55-Secret/word+9";
const USER = "alice-the-user";
let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A server that fails every call (HTTP 500), so that the run retries, gives up, and records the error. */
async function failingServer(): Promise<MockOpenAIServer> {
  return startMockOpenAIServer({ failures: Array.from({ length: 10 }, () => ({ status: 500 })) });
}

function withCredentials(url: string): string {
  return url.replace("http://", `http://${USER}:${encodeURIComponent(PASSWORD)}@`);
}

/**
 * Everything a user reads or lllm kept after the run: stderr, stdout, logs.db's bytes, `logs show` and `logs --json`.
 * The runs always spawn the built CLI: lllm's redactor is one for the whole process and only grows, so a run in this
 * process would register the password, and hide it from every print after. The `logs` commands spawn after the first
 * run and run main() in this process after the second: no call in this process ever had the password to register.
 */
async function everythingAfter(run: { stdout: string; stderr: string }, home: string, cli: (args: string[], options: { env: NodeJS.ProcessEnv }) => Promise<CliResult> = runCli): Promise<Record<string, string>> {
  const show = await cli(["logs", "show", "last"], { env: { LLLM_HOME: home } });
  const showJson = await cli(["logs", "show", "last", "--json"], { env: { LLLM_HOME: home } });
  const list = await cli(["logs", "--json"], { env: { LLLM_HOME: home } });
  return { stderr: run.stderr, stdout: run.stdout, store: readFileSync(path.join(home, "logs.db")).toString("latin1"), show: show.stdout + show.stderr, showJson: showJson.stdout, list: list.stdout };
}

function expectNoCredentials(texts: Record<string, string>): void {
  for (const [where, text] of Object.entries(texts)) {
    expect({ where, leaks: leaksOf(text, PASSWORD) }).toEqual({ where, leaks: [] });
    expect({ where, user: text.includes(USER) }).toEqual({ where, user: false });
  }
}

describe("a password in a base URL", () => {
  it("from the tactic (invoker_config.base_url): masked in the retry notices, the error, the store and `logs`", async () => {
    server = await failingServer();
    const dir = tempDir("lllm-url-");
    const home = path.join(dir, "home");
    const tactic = path.join(dir, "t.yaml");
    writeFileSync(tactic, `name: t\nprompt: "{input}"\nglobal:\n  model_name: gpt-4o-mini\n  invoker_config: {base_url: "${withCredentials(server.url)}"}\nagent_configs:\n  - name: bot\n    system_prompt: Hi.\n`);
    const run = await runCli(["--verbose", "run", tactic, "--input", "hi"], { env: { LLLM_HOME: home, OPENAI_API_KEY: "sk-url-test-key", LLLM_RETRY_DELAY_MS: "10" }, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(1);
    // The run did retry and fail at that URL, so the texts checked below are the ones that named it.
    expect(run.stderr).toContain("lllm: retry:");
    const masked = server.url.replace("http://", "http://[redacted]@");
    expect(run.stderr).toContain(`at ${masked}: attempt 1/`);
    expect(run.stderr).toContain(`lllm: error: ${masked} answered HTTP 500`);
    const texts = await everythingAfter(run, home);
    expect(texts.show).toContain(`${masked} answered HTTP 500`);
    expectNoCredentials(texts);
  }, 120_000);

  it("from the environment (OPENAI_BASE_URL): masked the same way", async () => {
    server = await failingServer();
    const dir = tempDir("lllm-url-");
    const home = path.join(dir, "home");
    const tactic = path.join(dir, "t.yaml");
    writeFileSync(tactic, 'name: t\nprompt: "{input}"\nglobal:\n  model_name: gpt-4o-mini\nagent_configs:\n  - name: bot\n    system_prompt: Hi.\n');
    const run = await runCli(["--verbose", "run", tactic, "--input", "hi"], { env: { LLLM_HOME: home, OPENAI_API_KEY: "sk-url-test-key", OPENAI_BASE_URL: withCredentials(server.url), LLLM_RETRY_DELAY_MS: "10" }, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain(`${server.url.replace("http://", "http://[redacted]@")} answered HTTP 500`);
    expectNoCredentials(await everythingAfter(run, home, runCliInProcess));
  }, 120_000);
});
