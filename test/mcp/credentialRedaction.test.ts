import { describe, expect, it } from "vitest";
import { serverFetch } from "../../src/mcp/createHttpTransport.js";
import { createOAuthProvider } from "../../src/mcp/oauth/createOAuthProvider.js";
import { secrets } from "../../src/util/redact.js";
import { tempDir } from "../helpers/tempTree.js";

/**
 * What lllm sends an HTTP MCP server to prove who it is is a secret by declaration, whatever the variable or header
 * is called: a server that echoes it (in a result or an error) must not bring it to the model, a log or stderr.
 * (The bearer token is checked end to end in test/cli/runMcpClientHooks.test.ts.)
 */
describe("an HTTP MCP server's credentials are redacted", () => {
  it("the values of the config's credential headers (not the others)", async () => {
    await serverFetch(
      { name: "remote", url: "http://127.0.0.1:9/mcp", headers: { "X-Api-Key": "hdr-key-0a1b2c3d4e", Authorization: "Basic dXNlcjpwYXNzd29yZC0x", "X-Client-Name": "plain-client-name" } },
      { env: {}, home: tempDir("lllm-mcp-home-") },
    );
    expect(secrets.redact("echo hdr-key-0a1b2c3d4e dXNlcjpwYXNzd29yZC0x plain-client-name")).toBe("echo [redacted] [redacted] plain-client-name");
    // Basic's password as the server decodes it, alone too.
    expect(secrets.redact("you sent password-1")).toBe("you sent [redacted]");
  });

  it("each cookie's value of a Cookie header, which a server may echo one at a time", async () => {
    await serverFetch({ name: "remote", url: "http://127.0.0.1:9/mcp", headers: { Cookie: "session=sess-9a8b7c6d5e4f; theme=dark-mode-choice" } }, { env: {}, home: tempDir("lllm-mcp-home-") });
    expect(secrets.redact("session is sess-9a8b7c6d5e4f")).toBe("session is [redacted]");
  });

  it("an OAuth client's secret from a variable of any name", async () => {
    await createOAuthProvider(
      { name: "ci", url: "http://127.0.0.1:9/mcp", oauth: { grant: "client_credentials", client_id: "bot", client_secret_env: "CI_CLIENT", issuer: "https://auth.example.com" } },
      { env: { CI_CLIENT: "oauth-client-5e6f7a8b9c" }, home: tempDir("lllm-mcp-home-") },
    );
    expect(secrets.redact("echo oauth-client-5e6f7a8b9c")).toBe("echo [redacted]");
  });
});
