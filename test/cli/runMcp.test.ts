import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { ROOT, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { orphanedProcesses } from "../helpers/processTree.js";
import { tempDir } from "../helpers/tempTree.js";

// Cases spawn the CLI and MCP servers: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
});

/**
 * The server-everything runs go through the built CLI: they check that no server is left behind, and one left running
 * by main() in this process would have the test worker as its parent, unseen by orphanedProcesses. The server that
 * fails to start, the HTTP server and server-filesystem are the CLI's main() in this process: what the tool loop does
 * with them does not depend on being a process of its own.
 */

describe("lllm run with an MCP server as a tool source", () => {
  it("offers the server's allowed tools, calls them over stdio, and stops the server at the end", async () => {
    server = await startMockOpenAIServer({
      script: [{ tool_calls: [{ name: "echo", arguments: { message: "hello mcp" } }, { name: "get-sum", arguments: { a: 2, b: 3 } }] }, "Done."],
    });
    const result = await runCli(["run", path.join(ROOT, "test/fixtures/run/mcp.yaml"), "--input", "Echo something", "--json"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    const posts = server.requests.filter((request) => request.method === "POST");
    const offered = (posts[0]!.body.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name).sort();
    expect(offered).toEqual(["echo", "get-sum"]);
    const messages = posts[1]!.body.messages as Array<{ role: string; content: string }>;
    const toolMessages = messages.filter((message) => message.role === "tool").map((message) => message.content);
    expect(toolMessages[0]).toContain("hello mcp");
    expect(toolMessages[1]).toContain("5");
    const report = JSON.parse(result.stdout) as { tool_calls: Array<{ name: string; error: string | null }> };
    expect(report.tool_calls.map((call) => [call.name, call.error])).toEqual([
      ["echo", null],
      ["get-sum", null],
    ]);
    expect(orphanedProcesses("server-everything/dist/index.js")).toEqual([]);
  });

  it("a require_approval name that no MCP tool has is refused once the servers are known (exit 2), before any model call; a right one asks", async () => {
    server = await startMockOpenAIServer({ script: [{ tool_calls: [{ name: "echo", arguments: { message: "hi" } }] }, "Done."] });
    const { writeFileSync } = await import("node:fs");
    const dir = tempDir("lllm-mcp-");
    const everything = path.join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    const tactic = (approve: string): string => `global: {model_name: gpt-test}\nrequire_approval: [${approve}]\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    mcp_servers:\n      - {name: everything, command: node, args: [${JSON.stringify(everything)}], allowed_tools: [echo]}\n`;
    writeFileSync(path.join(dir, "typo.yaml"), tactic("ecko"));
    const typo = await runCli(["run", path.join(dir, "typo.yaml"), "--input", "x"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(typo.code, typo.stderr).toBe(2);
    expect(typo.stderr).toMatch(/typo\.yaml:2:\d+: require_approval names `ecko`, which no agent of this tactic is offered/);
    expect(typo.stderr).toContain("`echo`");
    expect(server.requests.filter((request) => request.method === "POST")).toHaveLength(0);
    expect(orphanedProcesses("server-everything/dist/index.js")).toEqual([]);
    // Spelt right, the call asks first: with no one to ask (no terminal), it is refused to the model.
    writeFileSync(path.join(dir, "right.yaml"), tactic("echo"));
    const right = await runCli(["run", path.join(dir, "right.yaml"), "--input", "x", "--json"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(right.code, right.stderr).toBe(0);
    const report = JSON.parse(right.stdout) as { tool_calls: Array<{ name: string; status?: string; error: string | null }> };
    expect(report.tool_calls.map((call) => call.name)).toEqual(["echo"]);
    expect(report.tool_calls[0]!.error).not.toBeNull();
  });

  it("a server that fails to start is a clear error naming it", async () => {
    server = await startMockOpenAIServer({ script: ["never"] });
    const { writeFileSync } = await import("node:fs");
    const dir = tempDir("lllm-mcp-");
    writeFileSync(path.join(dir, "t.yaml"), "global: {model_name: gpt-test}\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    mcp_servers:\n      - {name: broken, command: node, args: [-e, 'process.exit(3)']}\n");
    const result = await runCliInProcess(["run", path.join(dir, "t.yaml"), "--input", "x"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("broken");
    expect(result.stdout).toBe("");
  });
});

describe("MCP over Streamable HTTP and server-filesystem, from the tool loop", () => {
  it("calls a tool of an HTTP server on 127.0.0.1 with the configured header", async () => {
    const { startHttpFixture } = await import("../mcp/fixtures/httpServer.js");
    const fixture = await startHttpFixture();
    try {
      server = await startMockOpenAIServer({ script: [{ tool_calls: [{ name: "calc_add", arguments: { a: 20, b: 22 } }, { name: "calc_whoami", arguments: {} }] }, "42."] });
      const { writeFileSync } = await import("node:fs");
      const dir = tempDir("lllm-mcp-http-");
      writeFileSync(path.join(dir, "t.yaml"), `global: {model_name: gpt-test}\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    mcp_servers:\n      - {name: calc, url: "${fixture.url}", headers: {Authorization: Bearer t0k}, prefix: calc_}\n`);
      const result = await runCliInProcess(["run", path.join(dir, "t.yaml"), "--input", "20+22?"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
      expect(result.stderr).toBe("");
      expect(result).toMatchObject({ code: 0, stdout: "42.\n" });
      const last = server.requests.filter((request) => request.method === "POST")[1]!.body.messages as Array<{ role: string; content: string }>;
      const results = last.filter((message) => message.role === "tool").map((message) => message.content);
      expect(results[0]).toContain("42");
      expect(results[1]).toContain("Bearer t0k");
      expect(fixture.sessions.opened).toHaveLength(1);
    } finally {
      await fixture.close();
    }
  });

  it("reads a file through server-filesystem on a temporary folder; a path outside it is an error for the model", async () => {
    const { writeFileSync } = await import("node:fs");
    const dir = tempDir("lllm-mcp-fs-");
    writeFileSync(path.join(dir, "notes.txt"), "the secret word is teapot");
    const serverPath = path.join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    writeFileSync(path.join(dir, "t.yaml"), `global: {model_name: gpt-test}\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    mcp_servers:\n      - {name: fs, command: node, args: ["${serverPath}", "${dir}"], allowed_tools: [read_text_file]}\n`);
    server = await startMockOpenAIServer({
      script: [{ tool_calls: [{ name: "read_text_file", arguments: { path: path.join(dir, "notes.txt") } }, { name: "read_text_file", arguments: { path: "/etc/passwd" } }] }, "teapot"],
    });
    const result = await runCliInProcess(["run", path.join(dir, "t.yaml"), "--input", "What is the secret word?"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(result).toMatchObject({ code: 0, stdout: "teapot\n" });
    const last = server.requests.filter((request) => request.method === "POST")[1]!.body.messages as Array<{ role: string; content: string }>;
    const results = last.filter((message) => message.role === "tool").map((message) => message.content);
    expect(results[0]).toContain("the secret word is teapot");
    expect(results[1]).toMatch(/^Error: .*(denied|outside|not allowed)/i);
  });
});
