import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";

vi.setConfig({ testTimeout: 120_000 });

const MULTILINE_ERROR_SERVER = fileURLToPath(new URL("./fixtures/multilineErrorServer.mjs", import.meta.url));

/** The lines of stderr that claim to be lllm's own. */
function lllmLines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => line.startsWith("lllm:"));
}

/**
 * The stdio server's `mcp tools` and the `run` spawn the built CLI, end to end; the HTTP server's refusals run its
 * main() in this process (lllm's own print, captured as the binary's).
 *
 * A server's text quoted in lllm's errors (a JSON-RPC error message, the body of an HTTP refusal) stays on one line:
 * a line break in it must not start a line on stderr that reads as lllm's own, nor a control code drive the terminal.
 */
describe("a server's text in lllm's errors", () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    // Refuses every request with a multi-line text body, as a proxy in front of a server might.
    server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        response.writeHead(403, { "content-type": "text/plain" });
        response.end("forbidden\nlllm: error: FORGED by the server\n\u001b[2Jcleared");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("keeps a stdio server's initialize error on the error's line", async () => {
    const result = await runCli(["mcp", "tools", "--", process.execPath, MULTILINE_ERROR_SERVER]);
    expect(result.code, result.stderr).toBe(1);
    expect(lllmLines(result.stderr)).toHaveLength(1);
    expect(lllmLines(result.stderr)[0]).toContain("failed to start: MCP error -32603: not today\\nlllm: error: FORGED by the server\\n\\u001b[2Jcleared");
    expect(result.stderr).not.toContain("\u001b");
  });

  it("keeps an HTTP server's refusal on the error's line, in --json too", async () => {
    const result = await runCliInProcess(["mcp", "tools", url]);
    expect(result.code, result.stderr).toBe(1);
    expect(lllmLines(result.stderr)).toHaveLength(1);
    expect(lllmLines(result.stderr)[0]).toContain("refused lllm's credentials: ");
    expect(lllmLines(result.stderr)[0]).toContain("forbidden\\nlllm: error: FORGED by the server");
    expect(result.stderr).not.toContain("\u001b");

    const json = await runCliInProcess(["mcp", "tools", "--json", url]);
    expect(json.code, json.stderr).toBe(1);
    const message = (JSON.parse(json.stdout) as { error: { message: string } }).error.message;
    expect(message).not.toContain("\n");
    expect(json.stderr.split("\n").filter((line) => line.startsWith("lllm: error: FORGED"))).toEqual([]);
  });

  it("keeps a tool's name on the line of an allowed_tools error that lists the server's tools", async () => {
    const dir = tempDir("lllm-mcp-forger-");
    const tactic = path.join(dir, "t.yaml");
    const server = JSON.stringify({ name: "forger", command: process.execPath, args: [MULTILINE_ERROR_SERVER, "tools"], allowed_tools: ["search"] });
    writeFileSync(tactic, `prompt: "{input}"\nglobal: {model_name: gpt-test, mcp_servers: [${server}]}\nagent_configs:\n  - {name: bot, system_prompt: hi}\n`);
    writeFileSync(path.join(dir, "turns.yaml"), "- text: never asked\n");
    const result = await runCli(["run", tactic, "--model", `scripted:${path.join(dir, "turns.yaml")}`, "--input", "hi"]);
    expect(result.code, result.stderr).toBe(2);
    expect(lllmLines(result.stderr).filter((line) => line.startsWith("lllm: error:"))).toHaveLength(1);
    expect(result.stderr).toContain("its tools are: lookup\\nlllm: error: FORGED by the server\\n\\u001b[2Jcleared");
  });
});
