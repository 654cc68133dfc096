import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServeHttp, type ServingCli } from "../../helpers/mcpServeHttp.js";
import { ROOT } from "../../helpers/paths.js";
import { runCli } from "../../helpers/runCli.js";
import { runCliInProcess } from "../../helpers/runCliInProcess.js";

/**
 * `lllm mcp tools <url>` against lllm's own token-protected server: what a user sees without the token, with it, with a
 * wrong one. The call with the token spawns the built CLI, end to end: lllm's redactor is one for the whole process
 * and only grows, so in this process it would register the token and hide it from every print after. The others run
 * its main() in this process, which never has the token to register.
 */

const FIXTURE = path.join(ROOT, "test/fixtures/mcp-conformance");
const TOKEN = "s3cret-token-for-the-hint-test";

describe("lllm mcp tools against a server that wants a bearer token", () => {
  let serving: ServingCli;
  beforeAll(async () => {
    serving = await startMcpServeHttp(FIXTURE, { args: ["--token-env", "MCP_TOKEN"], env: { MCP_TOKEN: TOKEN } });
  }, 90_000);
  afterAll(() => serving?.cli.killTree());

  it("without the token: the server's own 401 message and how to pass a token, not an OAuth failure", async () => {
    const result = await runCliInProcess(["mcp", "tools", serving.url]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("lllm: error: MCP server `127.0.0.1` needs a token: it answered HTTP 401: \"Unauthorized: send the token as `Authorization: Bearer <token>`\", and offers no OAuth sign-in");
    expect(result.stderr).toContain("bearer_token_env: NAME");
    expect(result.stderr).toContain("lllm mcp tools --bearer-token-env NAME <url>");
    expect(result.stderr).not.toMatch(/OAuth\) failed|invalid_type|Raw body/);
  });

  it("with --bearer-token-env: lists the tools and never prints the token; a wrong token gets the server's message", async () => {
    const good = await runCli(["mcp", "tools", "--bearer-token-env", "THE_TOKEN", serving.url], { env: { THE_TOKEN: TOKEN } });
    expect(good.stderr).toBe("");
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toMatch(/^test_simple_text /m);
    const wrong = await runCliInProcess(["mcp", "tools", "--bearer-token-env", "THE_TOKEN", serving.url], { env: { THE_TOKEN: "not-the-token" } });
    expect(wrong.code, wrong.stderr).toBe(1);
    expect(wrong.stderr).toContain("refused lllm's credentials: it answered HTTP 401: \"Unauthorized: send the token as `Authorization: Bearer <token>`\"");
    for (const output of [good.stdout, good.stderr, wrong.stdout, wrong.stderr]) expect(output).not.toContain(TOKEN);
  });

  it("--bearer-token-env takes a variable's name, for a URL only", async () => {
    const command = await runCliInProcess(["mcp", "tools", "--bearer-token-env", "X", "node server.js"]);
    expect(command.code, command.stderr).toBe(2);
    expect(command.stderr).toContain("--bearer-token-env applies to servers reached by URL, not to a command");
    const value = await runCliInProcess(["mcp", "tools", "--bearer-token-env", "Bearer abc", serving.url]);
    expect(value.code, value.stderr).toBe(2);
    expect(value.stderr).toContain("is not the name of an environment variable");
  });
});
