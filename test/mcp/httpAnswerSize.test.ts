import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";
import { startHugeAnswerServer, type HugeAnswerFixture } from "./fixtures/hugeAnswerServer.js";

vi.setConfig({ testTimeout: 120_000 });

/**
 * An HTTP MCP server that answers with 40 MB, streamed: lllm reads at most 10 MB of one message (as over stdio), so
 * a broken or hostile server cannot fill its memory. A tool call over the limit is an error the model reads; a
 * `tools/list` over it fails the start, naming the server. The server is in this process: the json cases are the
 * CLI's main() in this process too, the sse cases the built CLI, end to end.
 */
describe("an HTTP MCP server's answer over the size limit", () => {
  let server: HugeAnswerFixture;
  beforeAll(async () => {
    server = await startHugeAnswerServer();
  });
  afterAll(() => server.close());

  it.each(["json", "sse"])("a tool's result (%s) is an error for the model, and the server stays usable", async (mode) => {
    const dir = tempDir("lllm-mcp-huge-");
    writeFileSync(path.join(dir, "turns.json"), JSON.stringify([{ tool_calls: [{ name: "huge", arguments: {} }] }, { tool_calls: [{ name: "small", arguments: {} }] }, "Done."]));
    writeFileSync(
      path.join(dir, "t.yaml"),
      `global: {model_name: gpt-test}\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    mcp_servers:\n      - ${JSON.stringify({ name: "huge", url: `${server.url}/${mode}` })}\n`,
    );
    const run = await (mode === "json" ? runCliInProcess : runCli)(["run", path.join(dir, "t.yaml"), "--input", "go", "--model", `scripted:${path.join(dir, "turns.json")}`, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { output: string; tool_calls: Array<{ name: string; error: string | null; result: unknown }> };
    expect(report.output).toBe("Done.");
    const [huge, small] = report.tool_calls;
    expect(huge!.error).toContain("MCP server `huge`: the result of `huge` is over the size limit");
    expect(huge!.error).toContain("at most 10 MB in one message");
    expect(small!.error).toBeNull();
    expect(small!.result).toBe("fine");
  });

  it.each(["json", "sse"])("a tools/list (%s) fails the start with a clear error", async (mode) => {
    const run = await (mode === "json" ? runCliInProcess : runCli)(["mcp", "tools", `${server.url}/list-${mode}`]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`MCP server \`127.0.0.1\` (${server.url}/list-${mode}) failed to start: its answer to \`tools/list\` is over the size limit`);
  });
});
