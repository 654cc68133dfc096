import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { ROOT, runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

let server: MockOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
});

describe("provider-side MCP (seed Step 9)", () => {
  it("sends mcp_servers_list as {type: mcp} tools on the Responses API", async () => {
    server = await startMockOpenAIServer({ script: ["The docs say hello."] });
    const result = await runCli(["run", path.join(ROOT, "test/fixtures/run/hosted-mcp.yaml"), "--input", "What do the docs say?"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url } });
    expect(result.stderr).toBe("");
    expect(result).toMatchObject({ code: 0, stdout: "The docs say hello.\n" });
    const request = server.requests.find((item) => item.method === "POST")!;
    expect(request.path).toBe("/v1/responses");
    expect(request.body.tools).toEqual([{ type: "mcp", server_label: "docs", server_url: "https://example.com/mcp", require_approval: "never", allowed_tools: ["search", "fetch_url"] }]);
  });

  it("is a configuration error (exit 2) on the chat completions API, pointing at the key", async () => {
    const dir = tempDir("lllm-hosted-");
    writeFileSync(path.join(dir, "t.yaml"), "global: {model_name: gpt-test}\nagent_configs:\n  - name: bot\n    system_prompt: hi\n    mcp_servers_list:\n      - {server_label: docs, server_url: 'https://example.com/mcp'}\n");
    const result = await runCli(["validate", "t.yaml"], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("t.yaml:6:7");
    expect(result.stderr).toContain("need the Responses API");
    expect(result.stderr).toContain("api_type: response");
  });
});
