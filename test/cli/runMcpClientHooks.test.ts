import { writeFileSync } from "node:fs";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { EVERYTHING } from "../mcp/helpers.js";
import { runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { mcpClientHooks } from "../../src/cli/mcpClientHooks.js";
import { startHttpFixture } from "../mcp/fixtures/httpServer.js";
import { tempDir } from "../helpers/tempTree.js";

// Cases spawn the CLI and MCP servers: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A tactic with one agent and the npm server-everything over stdio (run by this node, never npx). */
function everythingTactic(extra = ""): string {
  const dir = tempDir("lllm-mcp-hooks-");
  const file = path.join(dir, "t.yaml");
  writeFileSync(file, `global: {model_name: gpt-test}\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    mcp_servers:\n      - {name: everything, command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(EVERYTHING)}]${extra}}\n`);
  return file;
}

/**
 * How lllm answers a sampling request does not depend on being a process of its own: that run is the CLI's main() in
 * this process (lllm stops its servers at the end of the run). The others go through the built CLI: `chat` reads
 * standard input; the bearer tokens must be printed nowhere (lllm redacts for the rest of a process every secret it
 * has read); and the progress run, whose line on stderr was missing in one of several runs in process (cause not
 * found).
 */
describe("lllm run answers what MCP servers ask", () => {
  it("a sampling request is answered by the agent's own model, and the server's answer reaches the agent", async () => {
    server = await startMockOpenAIServer({
      script: [{ tool_calls: [{ name: "trigger-sampling-request", arguments: { prompt: "Name a colour", maxTokens: 20 } }] }, "Teal.", "The server's model said teal."],
    });
    const result = await runCliInProcess(["run", everythingTactic(), "--input", "Ask the server to sample", "--json"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { output: string; usage: { llm_calls: number; by_agent: Record<string, { model_calls: number }> } };
    expect(report.output).toBe("The server's model said teal.");
    // The sampling call counts in the run's usage like the agent's own two calls, and in its budget under a name of its own.
    expect(report.usage.llm_calls).toBe(3);
    expect(Object.values(report.usage.by_agent).map((entry) => entry.model_calls).sort()).toEqual([1, 2]);
    expect(Object.keys(report.usage.by_agent).some((name) => name.endsWith("(MCP sampling)"))).toBe(true);
    const posts = server.requests.filter((request) => request.method === "POST");
    expect(posts).toHaveLength(3);
    // The second request is the server's: its system prompt and message, with its token limit.
    expect(posts[1]!.body.messages).toEqual([
      { role: "system", content: "You are a helpful test server." },
      { role: "user", content: "Resource trigger-sampling-request context: Name a colour" },
    ]);
    expect(posts[1]!.body.max_tokens).toBe(20);
    const toolMessage = (posts[2]!.body.messages as Array<{ role: string; content: string }>).find((message) => message.role === "tool");
    expect(toolMessage?.content).toContain("Teal.");
  });

  /** `args` (run or chat over the everything server) calls a tool that reports progress, then one that asks the user. */
  async function progressThenQuestion(args: string[], input?: string): Promise<void> {
    server = await startMockOpenAIServer({
      script: [{ tool_calls: [{ name: "trigger-long-running-operation", arguments: { duration: 0.2, steps: 2 } }, { name: "trigger-elicitation-request", arguments: {} }] }, "Done."],
    });
    const result = await runCli(args, { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url }, ...(input !== undefined ? { input } : {}) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("Done.\n");
    expect(result.stderr).toContain("lllm: everything.trigger-long-running-operation: 1/2\n");
    const posts = server.requests.filter((request) => request.method === "POST");
    const toolMessages = (posts[1]!.body.messages as Array<{ role: string; content: string }>).filter((message) => message.role === "tool").map((message) => message.content);
    expect(toolMessages[1]).toContain("declined");
  }

  it("progress of a tool call is shown on stderr; a question is declined without a terminal", async () => {
    await progressThenQuestion(["run", everythingTactic(), "--input", "Go"]);
  });

  it("lllm chat shows a tool call's progress as run does, and declines a question (its prompt has the keyboard)", async () => {
    await progressThenQuestion(["chat", everythingTactic(), "--no-log"], "Go\n");
  });

  it("a bearer token comes from the variable bearer_token_env names and appears in no output", async () => {
    const fixture = await startHttpFixture();
    try {
      server = await startMockOpenAIServer({ script: [{ tool_calls: [{ name: "whoami", arguments: {} }] }, "Checked."] });
      const dir = tempDir("lllm-mcp-bearer-");
      const file = path.join(dir, "t.yaml");
      writeFileSync(file, `global: {model_name: gpt-test}\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    mcp_servers:\n      - {name: calc, url: "${fixture.url}", bearer_token_env: CALC_TOKEN}\n`);
      const result = await runCli(["run", file, "--input", "who am I?", "--json"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, CALC_TOKEN: "calc-s3cret-token" } });
      expect(result.code, result.stderr).toBe(0);
      const posts = server.requests.filter((request) => request.method === "POST");
      // The server received it (the model reads what whoami returned, with the key redacted as every text is)...
      const toolMessage = (posts[1]!.body.messages as Array<{ role: string; content: string }>).find((message) => message.role === "tool");
      expect(toolMessage?.content).toMatch(/Bearer /);
      // ...and it is in no output of lllm.
      expect(result.stdout).not.toContain("calc-s3cret-token");
      expect(result.stderr).not.toContain("calc-s3cret-token");
    } finally {
      await fixture.close();
    }
  });

  it("a bearer token from a variable of any name is redacted from what the model reads and from every output", async () => {
    // MCP_BEARER does not look like a credential by its name (…_TOKEN, …_KEY do): bearer_token_env says it is one.
    const fixture = await startHttpFixture();
    try {
      server = await startMockOpenAIServer({ script: [{ tool_calls: [{ name: "whoami", arguments: {} }] }, "Checked."] });
      const dir = tempDir("lllm-mcp-bearer-");
      const file = path.join(dir, "t.yaml");
      writeFileSync(file, `global: {model_name: gpt-test}\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    mcp_servers:\n      - {name: calc, url: "${fixture.url}", bearer_token_env: MCP_BEARER}\n`);
      const result = await runCli(["run", file, "--input", "who am I?", "--verbose"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, MCP_BEARER: "bearer-9f8e7d6c5b4a" } });
      expect(result.code, result.stderr).toBe(0);
      const posts = server.requests.filter((request) => request.method === "POST");
      const toolMessage = (posts[1]!.body.messages as Array<{ role: string; content: string }>).find((message) => message.role === "tool");
      expect(toolMessage?.content).toContain("Bearer [redacted]");
      expect(JSON.stringify(posts.map((request) => request.body))).not.toContain("bearer-9f8e7d6c5b4a");
      expect(result.stdout).not.toContain("bearer-9f8e7d6c5b4a");
      expect(result.stderr).not.toContain("bearer-9f8e7d6c5b4a");
    } finally {
      await fixture.close();
    }
  });
});

describe("an MCP server's question on the terminal (mcpClientHooks)", () => {
  async function ask(lines: string[] | "end"): Promise<{ result: unknown; shown: string }> {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = "";
    output.on("data", (chunk: Buffer) => (shown += chunk.toString()));
    const hooks = mcpClientHooks({ verbose: false, terminal: { input, output } });
    const pending = hooks.elicit!({
      server: "evil\u001b[2J",
      message: "Pick a size\u001b]0;pwned\u0007\nlllm: forged line",
      schema: { type: "object", properties: { size: { type: "string", title: "Size\u001b[31m", enum: ["small", "large"] }, count: { type: "integer", default: 1 } }, required: ["size"] },
    });
    input.end(lines === "end" ? "" : lines.map((line) => `${line}\n`).join(""));
    return { result: await pending, shown };
  }

  it("names the server, escapes its control characters, takes a numbered choice and the default", async () => {
    const { result, shown } = await ask(["2", ""]);
    expect(result).toEqual({ action: "accept", content: { size: "large", count: 1 } });
    expect(shown).toContain("MCP server `evil\\u001b[2J` asks: Pick a size\\u001b]0;pwned\\u0007\\nlllm: forged line");
    expect(shown).toContain("Size\\u001b[31m 1) small, 2) large: ");
    expect(shown).not.toContain("\u001b");
    expect(shown).not.toContain("\nlllm: forged");
  });

  it("cancels at the end of input (Ctrl-D) and declines on !decline", async () => {
    expect((await ask("end")).result).toEqual({ action: "cancel" });
    expect((await ask(["!decline"])).result).toEqual({ action: "decline" });
  });
});
