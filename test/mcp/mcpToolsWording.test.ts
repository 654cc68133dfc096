import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { startCli } from "../helpers/processTree.js";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { FIXTURE } from "./helpers.js";

vi.setConfig({ testTimeout: 120_000 });

/** What `lllm mcp tools` calls a server started from a command, and what it says when it is stopped while the server starts. */

describe("lllm mcp tools: naming a command's server, and a stop during its start", () => {
  it("names the server after its program or script, never after inline code", async () => {
    const inline = await runCli(["mcp", "tools", "node -e 'process.exit(3)'"]);
    expect(inline.code, inline.stderr).toBe(1);
    expect(inline.stderr).toContain("lllm: error: MCP server `node` (node -e \"process.exit(3)\") failed to start: the process exited before answering");
    const script = await runCli(["mcp", "tools", "--", "node", "--require", "./no-such-preload.cjs", FIXTURE]);
    expect(script.stderr).toContain("MCP server `stdioServer` (");
  });

  it("says the server was stopped when SIGTERM comes while it starts, and exits 143", async () => {
    const mark = path.join(tempDir("lllm-mcp-stop-"), "started");
    const cli = startCli(["mcp", "tools", `node -e 'require("fs").writeFileSync(process.argv[1], "x"); setTimeout(() => {}, 1e6)' ${mark}`]);
    try {
      expect(await waitUntil(() => existsSync(mark), 60_000)).toBe(true);
      process.kill(cli.pid, "SIGTERM");
      expect(await cli.exit(30_000)).toBe(143);
    } finally {
      cli.killTree();
    }
    expect(cli.stderr()).toContain("lllm: error: MCP server `node` (node -e ");
    expect(cli.stderr()).toContain("was stopped while it was starting (stopped by SIGTERM)");
    expect(cli.stderr()).not.toContain("exited before answering");
  });
});
