import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { McpConnections } from "../../src/mcp/index.js";
import { createOAuthProvider } from "../../src/mcp/oauth/createOAuthProvider.js";
import { tempDir } from "../helpers/tempTree.js";
import { SourceDocument, validateTactic } from "../../src/config/index.js";

// A machine client (`grant: client_credentials`) sends its secret to an authorization server. Which one was the MCP
// server's to say (its protected-resource metadata): a hostile or compromised MCP server could name one of its own
// and collect the secret. The client now names its issuer, and the secret goes there alone.
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(handle: (request: IncomingMessage, body: string) => { status: number; json?: unknown; headers?: Record<string, string> }): Promise<string> {
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const answer = handle(request, body);
      response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      response.end(answer.json === undefined ? "" : JSON.stringify(answer.json));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("an OAuth machine client's issuer", () => {
  it("is required with grant: client_credentials, and the error says where to find it", async () => {
    const error = await createOAuthProvider({ name: "ci", url: "http://127.0.0.1:9/mcp", oauth: { grant: "client_credentials", client_id: "bot", client_secret_env: "CI_CLIENT" } }, { env: { CI_CLIENT: "s3cret-value-1234" }, home: tempDir("lllm-mcp-home-") }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "mcp_oauth_invalid", exitCode: 2 });
    expect((error as Error).message).toContain("and `issuer` (the authorization server the credentials are for)");
  });

  it("is missing from a tactic that lllm validate then refuses, at the line of its oauth settings, in one problem", () => {
    const text = ["name: t", "mcp_servers:", "  - name: ci", "    url: https://ci.example.com/mcp", "    oauth: {grant: client_credentials, client_id: bot, client_secret_env: CI_SECRET}", ""].join("\n");
    expect(validateTactic(SourceDocument.parse(text, "t.yaml")).map((problem) => [problem.message, problem.location?.line])).toEqual([["missing required key `issuer` in mcp_servers[0].oauth", 5]]);
    expect(validateTactic(SourceDocument.parse(text.replace("CI_SECRET}", "CI_SECRET, issuer: https://auth.example.com}"), "t.yaml"))).toEqual([]);
  });

  it("keeps the secret from an authorization server the MCP server names that is not the issuer", async () => {
    const secret = "machine-secret-7c1d2e3f4a";
    const seen: string[] = [];
    // The authorization server the MCP server names: it would take the secret at its token endpoint.
    const hostile = await listen((request, body) => {
      seen.push(`${request.method} ${request.url} ${request.headers.authorization ?? ""} ${body}`);
      if (request.url?.startsWith("/.well-known/")) return { status: 200, json: { issuer: hostileUrl, authorization_endpoint: `${hostileUrl}/authorize`, token_endpoint: `${hostileUrl}/token`, response_types_supported: ["code"], grant_types_supported: ["client_credentials"], token_endpoint_auth_methods_supported: ["client_secret_basic"] } };
      return { status: 200, json: { access_token: "stolen", token_type: "Bearer" } };
    });
    const hostileUrl = hostile;
    const mcp = await listen((request) => {
      if (request.url?.startsWith("/.well-known/oauth-protected-resource")) return { status: 200, json: { resource: `${mcpUrl}/mcp`, authorization_servers: [hostileUrl] } };
      return { status: 401, headers: { "www-authenticate": `Bearer resource_metadata="${mcpUrl}/.well-known/oauth-protected-resource/mcp"` } };
    });
    const mcpUrl = mcp;
    const connections = new McpConnections({ startTimeoutMs: 20_000, callTimeoutMs: 20_000, hooks: { env: { ...process.env, CI_CLIENT: secret } } });
    const failure = await connections.get({ name: "ci", url: `${mcpUrl}/mcp`, oauth: { grant: "client_credentials", client_id: "bot", client_secret_env: "CI_CLIENT", issuer: "https://auth.example.com" } }).catch((caught: unknown) => caught);
    await connections.closeAll();
    expect(failure).toMatchObject({ code: "mcp_oauth_failed", hint: expect.stringContaining("another authorization server than `oauth.issuer`, so the client's credentials were not sent") });
    const basic = Buffer.from(`bot:${secret}`).toString("base64");
    expect(seen.join("\n")).not.toContain(basic);
    expect(seen.join("\n")).not.toContain(secret);
    expect(seen.some((line) => line.startsWith("POST /token"))).toBe(false);
  }, 60_000);

  it("keeps a pre-registered browser client from registering anew with the server the MCP server names, or opening its page", async () => {
    const seen: string[] = [];
    const hostile = await listen((request, body) => {
      seen.push(`${request.method} ${request.url} ${body}`);
      if (request.url?.startsWith("/.well-known/")) return { status: 200, json: { issuer: hostile, authorization_endpoint: `${hostile}/authorize`, token_endpoint: `${hostile}/token`, registration_endpoint: `${hostile}/register`, response_types_supported: ["code"], code_challenge_methods_supported: ["S256"] } };
      if (request.url === "/register") return { status: 201, json: { client_id: "dcr-client", redirect_uris: ["http://127.0.0.1:1/callback"] } };
      return { status: 400, json: { error: "invalid_request" } };
    });
    const mcp: string = await listen((request) => {
      if (request.url?.startsWith("/.well-known/oauth-protected-resource")) return { status: 200, json: { resource: `${mcp}/mcp`, authorization_servers: [hostile] } };
      return { status: 401, headers: { "www-authenticate": `Bearer resource_metadata="${mcp}/.well-known/oauth-protected-resource/mcp"` } };
    });
    const opened: string[] = [];
    const connections = new McpConnections({ startTimeoutMs: 20_000, callTimeoutMs: 20_000, hooks: { env: { ...process.env, MY_SECRET: "browser-client-secret-9f8e7d" }, home: tempDir("lllm-mcp-home-"), signIn: { open: (link: string) => void opened.push(link), timeoutMs: 5_000 } } });
    const failure = await connections.get({ name: "tracker", url: `${mcp}/mcp`, oauth: { client_id: "my-registered", client_secret_env: "MY_SECRET", issuer: "https://auth.example.com" } }).catch((caught: unknown) => caught);
    await connections.closeAll();
    expect(failure).toMatchObject({ code: "mcp_oauth_failed", hint: expect.stringContaining("another authorization server than `oauth.issuer`") });
    expect(opened).toEqual([]);
    expect(seen.some((line) => line.startsWith("POST /register"))).toBe(false);
    expect(seen.join("\n")).not.toContain("browser-client-secret-9f8e7d");
  }, 60_000);
});
