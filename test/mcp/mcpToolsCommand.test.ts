import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { mcpToolsCommand } from "../../src/cli/mcp.js";
import { startHttpFixture } from "./fixtures/httpServer.js";
import { FIXTURE } from "./helpers.js";

describe("lllm mcp tools", () => {
  let stdout: MockInstance;
  const printed = (): string => stdout.mock.calls.map(([text]) => String(text)).join("");
  beforeEach(() => {
    stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  });
  afterEach(() => stdout.mockRestore());

  it("prints each tool's name and first description line for a command line", async () => {
    await mcpToolsCommand(`${JSON.stringify(process.execPath)} ${JSON.stringify(FIXTURE)}`);
    expect(printed()).toBe(
      [
        "list_orders  List the orders of a month",
        "count        A number as text",
        "greet        Plain text",
        "find_order   An error envelope",
        "fail         An error result",
        "slow         Answers after `ms` milliseconds",
        "files_read   A name with a dot",
        "crash        Exits the server in the middle of the call",
        "hang         Writes `mark` (a file path) and never answers",
        "big          A text result of `bytes` characters",
        "env          One environment variable",
        "",
      ].join("\n"),
    );
  });

  it("prints the tools as the model sees them with --json, for argv words and a URL", async () => {
    await mcpToolsCommand([process.execPath, FIXTURE], { json: true });
    const { schema_version, tools } = JSON.parse(printed()) as { schema_version: number; tools: Array<{ type: string; function: { name: string; parameters: unknown } }> };
    expect(schema_version).toBe(1);
    expect(tools[0]).toEqual({ type: "function", function: { name: "list_orders", description: "List the orders of a month\nSecond line of the description.", parameters: { type: "object", properties: { month: { type: "string" } }, required: ["month"], additionalProperties: false }, strict: true } });
    stdout.mockClear();
    const fixture = await startHttpFixture();
    try {
      await mcpToolsCommand(fixture.url, { header: ["Authorization: Bearer x"] });
    } finally {
      await fixture.close();
    }
    expect(printed()).toBe("add     Add two numbers\nwhoami  The Authorization header the server received\n");
  });

  it("fails with the server's name when it cannot start", async () => {
    await expect(mcpToolsCommand("lllm-no-such-command --x")).rejects.toMatchObject({ code: "mcp_command_not_found", message: "MCP server `lllm-no-such-command`: cannot run `lllm-no-such-command`: command not found" });
  });
});
