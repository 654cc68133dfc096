import { createServer, type ServerResponse, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runCli } from "../helpers/runCli.js";

vi.setConfig({ testTimeout: 120_000 });

/**
 * A Streamable HTTP server that gives a session id and answers everything but the DELETE that ends the session,
 * which it leaves hanging (a server that is stuck, or one that means harm).
 */
function hangingDeleteServer(): { server: Server; deletes: () => number; release: () => void } {
  let deletes = 0;
  const hanging: ServerResponse[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      if (request.method === "DELETE") {
        deletes++;
        hanging.push(response);
        return;
      }
      if (request.method !== "POST") {
        response.writeHead(405).end();
        return;
      }
      const message = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } };
      if (message.id === undefined) {
        response.writeHead(202).end();
        return;
      }
      const result =
        message.method === "initialize"
          ? { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "stuck", version: "1.0.0" } }
          : { tools: [{ name: "lookup", description: "Look something up", inputSchema: { type: "object" } }] };
      response.writeHead(200, { "content-type": "application/json", "mcp-session-id": "session-1" });
      response.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    });
  });
  return { server, deletes: () => deletes, release: () => hanging.forEach((response) => response.destroy()) };
}

describe("ending the session of an HTTP MCP server", () => {
  const stuck = hangingDeleteServer();
  let url: string;

  beforeAll(async () => {
    await new Promise<void>((resolve) => stuck.server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(stuck.server.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    stuck.release();
    await new Promise((resolve) => stuck.server.close(resolve));
  });

  it("asks to end the session, and exits even when the server never answers", async () => {
    const result = await runCli(["mcp", "tools", url]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("lookup  Look something up\n");
    expect(stuck.deletes()).toBe(1);
  });
});
