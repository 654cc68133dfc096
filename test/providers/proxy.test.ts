import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockAnthropicServer, startMockGeminiServer, startMockOpenAIServer } from "../../src/testing/index.js";
import { freePort } from "../helpers/freePort.js";
import { startHttpProxy, type HttpProxy } from "../helpers/httpProxy.js";
import { ROOT, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { leaksOf } from "../helpers/secretEncodings.js";
import { selfSignedCertificate, startTlsFront } from "../helpers/tlsServer.js";

/**
 * The model clients go through the proxies of the environment (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, either case), as
 * users of corporate networks need: a CONNECT tunnel for https, an absolute-form request for http. The proxy's
 * credentials go to the proxy alone; the API key never reaches it through a tunnel.
 *
 * The runs against http servers, and the unreachable proxy, are the CLI's main() in this process: what goes through
 * the proxy and what lllm says does not depend on being a process of its own. The built CLI runs the https cases
 * (Node reads NODE_EXTRA_CA_CERTS when its process starts) and the checks that no secret is printed (lllm redacts
 * for the rest of a process every secret it has read).
 */

const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");
const certificate = selfSignedCertificate();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const portOf = (url: string): number => Number(new URL(url).port);

async function proxy(options: { credentials?: string } = {}): Promise<HttpProxy> {
  const started = await startHttpProxy(options);
  closers.push(() => started.close());
  return started;
}

/** A mock server of each wire format, and the variables that point lllm at it. */
const providers = [
  {
    model: "gpt-4o-mini",
    key: "sk-openai-key-0000000001",
    start: startMockOpenAIServer,
    env: (origin: string, key: string): NodeJS.ProcessEnv => ({ OPENAI_API_KEY: key, OPENAI_BASE_URL: `${origin}/v1` }),
    keyHeader: "authorization",
  },
  {
    model: "anthropic/claude-haiku-4-5",
    key: "sk-ant-key-000000000002",
    start: startMockAnthropicServer,
    env: (origin: string, key: string): NodeJS.ProcessEnv => ({ ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: origin }),
    keyHeader: "x-api-key",
  },
  {
    model: "gemini/gemini-2.5-flash",
    key: "gemini-key-00000000003",
    start: startMockGeminiServer,
    env: (origin: string, key: string): NodeJS.ProcessEnv => ({ GEMINI_API_KEY: key, GEMINI_BASE_URL: origin }),
    keyHeader: "x-goog-api-key",
  },
];

for (const provider of providers) {
  describe(`${provider.model} through a proxy`, { timeout: 120_000 }, () => {
    it("an https server is reached through a CONNECT tunnel carrying the proxy's credentials, never the key", async () => {
      const server = await provider.start({ script: ["Sunny."] });
      closers.push(() => server.close());
      const front = await startTlsFront(certificate, portOf(server.url));
      closers.push(() => front.close());
      const tunnel = await proxy({ credentials: "corp-user:proxy-Secret-42" });
      const origin = `https://127.0.0.1:${front.port}`;
      const result = await runCli(["run", loop, "--model", provider.model, "--input", "Weather?"], {
        env: { ...provider.env(origin, provider.key), https_proxy: `http://corp-user:proxy-Secret-42@127.0.0.1:${tunnel.port}`, NODE_EXTRA_CA_CERTS: certificate.certFile },
        timeoutMs: 60_000,
      });
      expect(result.stderr).toBe("");
      expect(result).toMatchObject({ code: 0, stdout: "Sunny.\n" });
      expect(tunnel.requests.map((request) => `${request.method} ${request.target}`)).toEqual([`CONNECT 127.0.0.1:${front.port}`]);
      expect(tunnel.requests[0]!.headers["proxy-authorization"]).toBe(`Basic ${Buffer.from("corp-user:proxy-Secret-42").toString("base64")}`);
      expect(JSON.stringify(tunnel.requests)).not.toContain(provider.key);
      // The server got the key, and not the proxy's credentials.
      const seen = server.requests.find((request) => request.method === "POST")!;
      expect(JSON.stringify(seen.headers)).toContain(provider.key);
      expect(seen.headers["proxy-authorization"]).toBeUndefined();
    });

    it("an http server is asked through the proxy in absolute form (HTTP_PROXY); NO_PROXY sends it direct, without the proxy's credentials", async () => {
      const server = await provider.start({ script: ["Sunny.", "Rainy."] });
      closers.push(() => server.close());
      const forward = await proxy();
      const port = portOf(server.url);
      const origin = `http://127.0.0.1:${port}`;
      const env = { ...provider.env(origin, provider.key), HTTP_PROXY: `http://user:proxy-Secret-42@127.0.0.1:${forward.port}` };
      const proxied = await runCliInProcess(["run", loop, "--model", provider.model, "--input", "Weather?"], { env });
      expect(proxied).toMatchObject({ code: 0, stdout: "Sunny.\n" });
      expect(forward.requests).toHaveLength(1);
      expect(forward.requests[0]!.method).toBe("POST");
      expect(forward.requests[0]!.target.startsWith(`${origin}/`)).toBe(true);
      expect(forward.requests[0]!.headers["proxy-authorization"]).toBe(`Basic ${Buffer.from("user:proxy-Secret-42").toString("base64")}`);

      const direct = await runCliInProcess(["run", loop, "--model", provider.model, "--input", "Weather?"], { env: { ...env, no_proxy: `localhost, 127.0.0.1:${port}` } });
      expect(direct).toMatchObject({ code: 0, stdout: "Rainy.\n" });
      expect(forward.requests).toHaveLength(1);
      const posts = server.requests.filter((request) => request.method === "POST");
      expect(posts).toHaveLength(2);
      expect(posts[1]!.headers["proxy-authorization"]).toBeUndefined();
    });
  });
}

describe("proxy failures", { timeout: 120_000 }, () => {
  it("a proxy that wants credentials (407) fails at once, says how to give them, and prints no secret", async () => {
    const server = await startMockOpenAIServer({ script: ["never"] });
    closers.push(() => server.close());
    const front = await startTlsFront(certificate, portOf(server.url));
    closers.push(() => front.close());
    const tunnel = await proxy({ credentials: "corp-user:the-right-password" });
    const result = await runCli(["run", loop, "--model", "gpt-4o-mini", "--input", "Weather?", "--verbose"], {
      env: { OPENAI_API_KEY: "sk-openai-key-0000000001", OPENAI_BASE_URL: `https://127.0.0.1:${front.port}/v1`, HTTPS_PROXY: `http://corp-user:Wrong-Password-77@127.0.0.1:${tunnel.port}`, NODE_EXTRA_CA_CERTS: certificate.certFile, LLLM_RETRY_DELAY_MS: "1" },
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(`the proxy http://127.0.0.1:${tunnel.port} refused the tunnel to 127.0.0.1:${front.port}: 407`);
    expect(result.stderr).toContain("http://USER:PASSWORD@host:port");
    expect(tunnel.requests).toHaveLength(1);
    expect(server.requests).toEqual([]);
    expect(leaksOf(result.stdout + result.stderr, "Wrong-Password-77")).toEqual([]);
    expect(leaksOf(result.stdout + result.stderr, "corp-user:Wrong-Password-77")).toEqual([]);
  });

  it("a proxy that cannot be reached is named as such, for https and http servers alike", async () => {
    const dead = await freePort();
    for (const [variable, baseURL] of [["HTTPS_PROXY", "https://api.example.test/v1"], ["HTTP_PROXY", "http://api.example.test/v1"]] as const) {
      const result = await runCliInProcess(["run", loop, "--model", "gpt-4o-mini", "--input", "Weather?"], { env: { OPENAI_API_KEY: "sk-openai-key-0000000001", OPENAI_BASE_URL: baseURL, [variable]: `http://127.0.0.1:${dead}`, LLLM_RETRY_DELAY_MS: "1" } });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain(`the proxy http://127.0.0.1:${dead} cannot be reached: connect ECONNREFUSED`);
      expect(result.stderr).toContain("check the proxy variables");
    }
  });

  it("a proxy variable that is not a usable URL is a configuration error (exit 2) that does not quote it", async () => {
    for (const value of ["http://user:Secret-Value-99@[bad", "socks5://user:Secret-Value-99@127.0.0.1:1080"]) {
      const result = await runCli(["run", loop, "--model", "gpt-4o-mini", "--input", "Weather?"], { env: { OPENAI_API_KEY: "sk-openai-key-0000000001", HTTPS_PROXY: value } });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain("HTTPS_PROXY");
      expect(result.stderr).not.toContain("Secret-Value-99");
    }
  });
});
