import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { McpConnections } from "../../src/mcp/index.js";

/** A config's `headers` (an API key) go to the MCP server's own origin only: never along a redirect, never to an OAuth server. */

interface Recorder {
  url: string;
  requests: Array<{ url: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

/** A loopback server that records every request and answers with `answer`. */
async function startRecorder(answer: (url: string) => { status: number; headers?: Record<string, string> }): Promise<Recorder> {
  const requests: Recorder["requests"] = [];
  const server: Server = createServer((request, response) => {
    requests.push({ url: request.url ?? "", headers: request.headers });
    request.resume();
    request.on("end", () => {
      const { status, headers } = answer(request.url ?? "");
      response.writeHead(status, headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const KEY = "key-that-stays-home-4711";
const servers: Recorder[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe("the headers of an HTTP MCP server's config", () => {
  it("are not sent along a redirect to another origin (the transport's requests, and OAuth discovery at the server's own origin)", async () => {
    const elsewhere = await startRecorder(() => ({ status: 404 }));
    // The MCP endpoint moved elsewhere; its own OAuth discovery documents (fetched after the 401) too. The MCP SDK
    // (1.32) does not follow these either; lllm's fetch refuses them by itself, whatever the SDK does.
    const moved = await startRecorder((url) => ({ status: 307, headers: { location: `${elsewhere.url}${url}` } }));
    const guarded = await startRecorder((url): { status: number; headers: Record<string, string> } => (url === "/mcp" ? { status: 401, headers: { "www-authenticate": "Bearer" } } : { status: 302, headers: { location: `${elsewhere.url}${url}` } }));
    servers.push(elsewhere, moved, guarded);
    for (const [server, transport] of [[moved, "streamable-http"], [moved, "sse"], [guarded, "streamable-http"]] as const) {
      const connections = new McpConnections({ startTimeoutMs: 20_000 });
      const error = await connections.get({ name: "remote", url: `${server.url}/mcp`, transport, headers: { "X-API-Key": KEY } }).catch((caught: unknown) => caught);
      await connections.closeAll();
      expect(error, transport).toBeInstanceOf(Error);
    }
    // The servers' own origins got the key on every request; the other origin never got it.
    for (const server of [moved, guarded]) {
      expect(server.requests.length).toBeGreaterThan(0);
      expect(server.requests.every((request) => request.headers["x-api-key"] === KEY)).toBe(true);
    }
    expect(guarded.requests.map((request) => request.url)).toContain("/.well-known/oauth-protected-resource/mcp");
    expect(elsewhere.requests.filter((request) => request.headers["x-api-key"] !== undefined)).toEqual([]);
  });

  it("are not sent to an OAuth authorization server of another origin", async () => {
    const authority = await startRecorder(() => ({ status: 404 }));
    const server = await startRecorder(() => ({ status: 401, headers: { "www-authenticate": `Bearer resource_metadata="${authority.url}/.well-known/oauth-protected-resource"` } }));
    servers.push(authority, server);
    const connections = new McpConnections({ startTimeoutMs: 20_000 });
    try {
      await connections.get({ name: "guarded", url: `${server.url}/mcp`, headers: { "X-API-Key": KEY } }).catch((caught: unknown) => caught);
    } finally {
      await connections.closeAll();
    }
    expect(server.requests.some((request) => request.headers["x-api-key"] === KEY)).toBe(true);
    // The discovery did reach the other origin, without the key.
    expect(authority.requests.map((request) => request.url)).toContain("/.well-known/oauth-protected-resource");
    expect(authority.requests.filter((request) => request.headers["x-api-key"] !== undefined)).toEqual([]);
  });
});
