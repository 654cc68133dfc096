import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../../src/testing/index.js";
import { startMcpServeHttp, type ServingCli } from "../../helpers/mcpServeHttp.js";
import { BIN, ROOT } from "../../helpers/paths.js";
import { cleanEnv, runCli } from "../../helpers/runCli.js";
import { shopPackage } from "../../helpers/serve.js";
import { tempDir } from "../../helpers/tempTree.js";

vi.setConfig({ testTimeout: 180_000 });

/** A tactic called through `lllm mcp serve` is in the run log as a served run, as a request to `lllm serve` is. */

let mock: MockOpenAIServer;
let shop: string;
let serving: ServingCli | undefined;

beforeAll(async () => {
  mock = await startMockOpenAIServer({ handler: () => "Apples cost 3 EUR." });
  shop = shopPackage(mock.url);
});

afterAll(async () => {
  serving?.cli.killTree();
  await mock?.close();
});

const textOf = (result: unknown): string => ((result as { content: Array<{ text: string }> }).content[0]!.text);

describe("lllm mcp serve records the tactics it runs", () => {
  it("over stdio and over HTTP: `lllm logs --served` lists each call with its route, tool and client", async () => {
    const home = tempDir("lllm-home-");
    const stdio = new Client({ name: "stdio-client", version: "1.2" });
    await stdio.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", "serve", shop], cwd: ROOT, env: cleanEnv({ LLLM_HOME: home }) as Record<string, string>, stderr: "pipe" }));
    expect(textOf(await stdio.callTool({ name: "shop", arguments: { task: "price of apples?" } }))).toBe("Apples cost 3 EUR.");
    await stdio.close();

    serving = await startMcpServeHttp(shop, { env: { LLLM_HOME: home } });
    const http = new Client({ name: "http-client", version: "0.9" });
    await http.connect(new StreamableHTTPClientTransport(new URL(serving.url), { requestInit: { headers: { authorization: `Bearer ${serving.token!}` } } }));
    expect(textOf(await http.callTool({ name: "shop", arguments: { task: "price of pears?" } }))).toBe("Apples cost 3 EUR.");
    // A plain tool is not a run: nothing is recorded for it.
    expect(textOf(await http.callTool({ name: "lookup_price", arguments: { item: "kiwi" } }))).toBe("kiwi: 3 EUR");
    await http.close();

    const listed = await runCli(["logs", "--served", "--json"], { env: { LLLM_HOME: home } });
    const runs = (JSON.parse(listed.stdout) as { runs: Array<{ status: string; tactic_name: string; input: string; served: { route: string; model: string; client: { user_agent?: string } } }> }).runs;
    expect(runs.map((run) => [run.status, run.tactic_name, run.served.route, run.served.model, run.served.client.user_agent])).toEqual([
      ["ok", "shop", "mcp", "shop", "http-client/0.9"],
      ["ok", "shop", "mcp.stdio", "shop", "stdio-client/1.2"],
    ]);
    const shown = await runCli(["logs", "show", "last"], { env: { LLLM_HOME: home } });
    expect(shown.stdout).toMatch(/^served over MCP \(HTTP\) as tool shop to http-client\/0\.9$/m);
    expect(shown.stdout).toContain("price of pears?");
    // The agents keep their own names: the run is not nested in another.
    expect(shown.stdout).toMatch(/\bclerk\b/);
    expect(shown.stdout).not.toContain("shop/clerk");
  });
});
