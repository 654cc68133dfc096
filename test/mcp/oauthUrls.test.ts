import { existsSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

// Issue 29 item 10: an OAuth authorization endpoint of `smb://…` went to $BROWSER / xdg-open. lllm signs in only over
// https (plain http only on this machine), and hands only http(s) addresses to a browser.
vi.setConfig({ testTimeout: 120_000 });

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/**
 * A loopback MCP endpoint that wants OAuth (401 naming its resource metadata), the metadata, an authorization server
 * whose metadata names `endpoints`, and a registration endpoint; every path asked for is recorded.
 */
async function protectedServer(authorization: (base: string) => { servers: string[]; authorizationEndpoint: string }): Promise<{ url: string; asked: string[] }> {
  const asked: string[] = [];
  server = createServer((request, response) => {
    const base = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
    const url = request.url ?? "/";
    asked.push(`${request.method} ${url}`);
    request.resume();
    const json = (status: number, body: unknown): void => void response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const { servers, authorizationEndpoint } = authorization(base);
    if (url.startsWith("/.well-known/oauth-protected-resource")) return json(200, { resource: `${base}/mcp`, authorization_servers: servers });
    if (url.startsWith("/.well-known/oauth-authorization-server") || url.startsWith("/.well-known/openid-configuration")) {
      return json(200, { issuer: base, authorization_endpoint: authorizationEndpoint, token_endpoint: `${base}/token`, registration_endpoint: `${base}/register`, response_types_supported: ["code"], code_challenge_methods_supported: ["S256"] });
    }
    if (url === "/register") return json(201, { client_id: "lllm-test-client", redirect_uris: ["http://127.0.0.1:1/callback"] });
    response.writeHead(401, { "www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"` }).end();
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, asked };
}

/** A `$BROWSER` that writes down what it was asked to open. */
function recordingBrowser(): { command: string; opened: string } {
  const dir = tempDir();
  const opened = path.join(dir, "opened.txt");
  const script = path.join(dir, "browser.mjs");
  writeFileSync(script, `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(opened)}, process.argv[2] + "\\n");\n`);
  return { command: `${process.execPath} ${script}`, opened };
}

describe("the addresses of an MCP server's OAuth sign-in", () => {
  it("an authorization endpoint that is not http(s) never reaches the browser", async () => {
    const { url } = await protectedServer((base) => ({ servers: [base], authorizationEndpoint: "smb://files.example/share" }));
    const browser = recordingBrowser();
    const result = await runCli(["mcp", "tools", url], { env: { BROWSER: browser.command } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('the authorization endpoint "smb://files.example/share" is not an https address');
    expect(result.stderr).not.toContain("Open this URL");
    expect(existsSync(browser.opened)).toBe(false);
  });

  it("an authorization server on plain http off this machine is not asked anything", async () => {
    const { url, asked } = await protectedServer(() => ({ servers: ["http://auth.lllm-test.invalid"], authorizationEndpoint: "http://auth.lllm-test.invalid/authorize" }));
    const browser = recordingBrowser();
    const result = await runCli(["mcp", "tools", url], { env: { BROWSER: browser.command } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("is plain http on another machine; lllm signs in only over https");
    expect(existsSync(browser.opened)).toBe(false);
    // Nothing was registered anywhere.
    expect(asked.filter((line) => line.includes("/register"))).toEqual([]);
  });
});
