import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors.js";
import { McpConnections } from "../../src/mcp/index.js";
import { FunctionCall } from "../../src/tools/index.js";
import { startHttpFixture, type HttpFixture } from "./fixtures/httpServer.js";

describe("a server over Streamable HTTP", () => {
  let fixture: HttpFixture;
  beforeAll(async () => {
    fixture = await startHttpFixture();
  });
  afterAll(() => fixture.close());

  it("lists and calls tools, sends the config's headers, and ends the session on closeAll", async () => {
    const connections = new McpConnections();
    try {
      const tools = await connections.get({ name: "remote", url: fixture.url, headers: { Authorization: "Bearer t0ken" }, prefix: "remote_" });
      expect(tools.map((tool) => tool.name)).toEqual(["remote_add", "remote_whoami"]);
      expect(tools[0]!.toTool().function.parameters).toEqual({ type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"], additionalProperties: false });
      const sum = await tools[0]!.call(new FunctionCall({ name: "remote_add", arguments: { a: 2, b: 40 } }));
      expect(sum.result).toBe(42);
      expect(sum.resultStr).toBe("Return of calling function remote_add with arguments {'a': 2, 'b': 40}:\n---\n42\n---");
      const who = await tools[1]!.call(new FunctionCall({ name: "remote_whoami" }));
      expect(who.result).toBe("Bearer t0ken");
    } finally {
      await connections.closeAll();
    }
    expect(fixture.sessions.opened).toHaveLength(1);
    expect(fixture.sessions.deleted).toEqual(fixture.sessions.opened);
  });

  it("reports a server that is not there, naming it and the URL", async () => {
    const connections = new McpConnections({ startTimeoutMs: 5000 });
    const closed = await startHttpFixture();
    const url = closed.url;
    await closed.close();
    const error = await connections.get({ name: "gone", url }).catch((caught: unknown) => caught);
    await connections.closeAll();
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).code).toBe("mcp_server_start_failed");
    expect((error as ToolError).message).toMatch(new RegExp(`^MCP server \`gone\` \\(${url.replaceAll(".", "\\.")}\\) failed to start: .*ECONNREFUSED`));
  });
});
