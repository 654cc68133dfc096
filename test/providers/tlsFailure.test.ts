import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { ROOT, runCli } from "../helpers/runCli.js";
import { selfSignedCertificate, startTlsFront, type TlsFront } from "../helpers/tlsServer.js";

/** A certificate Node does not trust cannot heal by waiting: one attempt, and a hint that says what to give Node. */

const loop = path.join(ROOT, "test/fixtures/run/loop.yaml");
let server: MockOpenAIServer | undefined;
let front: TlsFront | undefined;
afterEach(async () => {
  await front?.close();
  await server?.close();
  front = undefined;
  server = undefined;
});

describe("a TLS certificate failure", { timeout: 120_000 }, () => {
  it("is not retried, and names NODE_EXTRA_CA_CERTS, which then works", async () => {
    const certificate = selfSignedCertificate();
    server = await startMockOpenAIServer({ script: ["Sunny."] });
    front = await startTlsFront(certificate, server.port);
    const env = { OPENAI_API_KEY: "sk-openai-key-0000000001", OPENAI_BASE_URL: `https://127.0.0.1:${front.port}/v1`, LLLM_RETRY_DELAY_MS: "1" };

    const refused = await runCli(["run", loop, "--model", "gpt-4o-mini", "--input", "Weather?", "--json"], { env, timeoutMs: 60_000 });
    expect(refused.code, refused.stderr).toBe(1);
    const report = JSON.parse(refused.stdout) as { error: { code: string; message: string; hint: string } };
    expect(report.error.code).toBe("provider_connection");
    expect(report.error.message).toContain("its TLS certificate is not signed by a CA that Node trusts (DEPTH_ZERO_SELF_SIGNED_CERT");
    expect(report.error.message).not.toContain("gave up after");
    expect(report.error.hint).toContain("export NODE_EXTRA_CA_CERTS=/path/to/ca.pem");
    expect(front.connections()).toBe(1);
    expect(server.requests).toEqual([]);

    const trusted = await runCli(["run", loop, "--model", "gpt-4o-mini", "--input", "Weather?"], { env: { ...env, NODE_EXTRA_CA_CERTS: certificate.certFile }, timeoutMs: 60_000 });
    expect(trusted).toMatchObject({ code: 0, stdout: "Sunny.\n" });
  });
});
