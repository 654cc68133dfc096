import { execFileSync } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { ROOT, runCli } from "../helpers/runCli.js";

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
});

/** Pids of running server-everything processes (to prove none is left behind). */
function everythingPids(): string[] {
  try {
    return execFileSync("pgrep", ["-f", "server-everything/dist/index.js"], { encoding: "utf8" }).split("\n").filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describe("lllm run with an MCP server as a tool source", () => {
  it("offers the server's allowed tools, calls them over stdio, and stops the server at the end", async () => {
    const before = everythingPids();
    server = await startMockOpenAIServer({
      script: [{ tool_calls: [{ name: "echo", arguments: { message: "hello mcp" } }, { name: "get-sum", arguments: { a: 2, b: 3 } }] }, "Done."],
    });
    const result = await runCli(["run", path.join(ROOT, "test/fixtures/run/mcp.yaml"), "--input", "Echo something", "--json"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
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
    expect(everythingPids()).toEqual(before);
  });

  it("a server that fails to start is a clear error naming it", async () => {
    server = await startMockOpenAIServer({ script: ["never"] });
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const os = await import("node:os");
    const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-mcp-"));
    writeFileSync(path.join(dir, "t.yaml"), "global: {model_name: gpt-test}\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    mcp_servers:\n      - {name: broken, command: node, args: [-e, 'process.exit(3)']}\n");
    const result = await runCli(["run", path.join(dir, "t.yaml"), "--input", "x"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("broken");
    expect(result.stdout).toBe("");
  });
});
