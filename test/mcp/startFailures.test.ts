import { describe, expect, it } from "vitest";
import { ConfigError, ToolError } from "../../src/errors.js";
import { McpConnections } from "../../src/mcp/index.js";
import { isAlive } from "./helpers.js";

describe("servers that do not start", () => {
  it("names a command that does not exist (a ConfigError: the config must change)", async () => {
    const connections = new McpConnections();
    const error = await connections.get({ name: "ghost", command: "lllm-no-such-mcp-server", args: ["--x"] }).catch((caught: unknown) => caught);
    await connections.closeAll();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: "mcp_command_not_found", message: "MCP server `ghost`: cannot run `lllm-no-such-mcp-server`: command not found" });
  });

  it("shows the stderr of a command that exits at once", async () => {
    const connections = new McpConnections();
    const config = { name: "broken", command: process.execPath, args: ["-e", "console.error('boom: OPENWEATHER_KEY is not set'); process.exit(3)"] };
    const error = await connections.get(config).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).code).toBe("mcp_server_start_failed");
    expect((error as ToolError).message).toMatch(/^MCP server `broken` \(.* -e ".*"\) failed to start: the process exited before answering\n {2}its stderr ends with:\n {4}boom: OPENWEATHER_KEY is not set$/);
    // The failure is remembered for the run: no second start.
    const again = await connections.get(config).catch((caught: unknown) => caught);
    expect(again).toBe(error);
    await connections.closeAll();
  });

  it("times out a command that is not an MCP server, and kills it", async () => {
    const connections = new McpConnections({ startTimeoutMs: 500 });
    const error = await connections.get({ name: "silent", command: process.execPath, args: ["-e", "console.error('listening nowhere'); setInterval(() => {}, 1000)"] }).catch((caught: unknown) => caught);
    const pid = connections.connections[0]!.pid!;
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).message).toBe("MCP server `silent` (" + `${process.execPath} -e "console.error('listening nowhere'); setInterval(() => {}, 1000)"` + ") did not start within 0.5 s\n  its stderr ends with:\n    listening nowhere");
    expect(isAlive(pid)).toBe(false);
    await connections.closeAll();
  });

  it("rejects a config with neither command nor url", async () => {
    const connections = new McpConnections();
    await expect(connections.get({ name: "empty" })).rejects.toMatchObject({ code: "mcp_server_invalid", message: "MCP server `empty`: needs a `command` (a local server over stdio) or a `url` (a remote server over HTTP)" });
    await expect(connections.get({ name: "both", command: "x", url: "http://127.0.0.1:1/mcp" })).rejects.toMatchObject({ code: "mcp_server_invalid" });
  });
});
