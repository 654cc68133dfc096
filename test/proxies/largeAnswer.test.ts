import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ROOT, runCli } from "../helpers/runCli.js";

vi.setConfig({ testTimeout: 120_000 });

const PACKAGE = path.join(ROOT, "test", "proxies", "fixtures", "clipkg");
const MB = 1024 * 1024;

/**
 * A data API whose answer has no end in sight: `/v1/city/Endless` streams 65 MB without a length, `/v1/city/Huge`
 * declares 1 GB up front. lllm must stop reading at 64 MB (the most one call can return), not hold it all.
 */
describe("an answer over the size limit", () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url?.startsWith("/v1/city/Huge")) {
        response.writeHead(200, { "content-type": "text/plain", "content-length": String(1024 * MB) });
        response.write("x".repeat(1024));
        return; // the rest never comes: lllm must not wait for it
      }
      response.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(MB, "x");
      let sent = 0;
      const write = (): void => {
        while (sent < 65) {
          sent++;
          if (!response.write(chunk)) return void response.once("drain", write);
        }
        response.end();
      };
      response.on("error", () => undefined);
      write();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const env = (): NodeJS.ProcessEnv => ({ CITIES_API_KEY: "cities-secret-key", LLLM_PROXY_CITIES_BASE_URL: url });

  it("fails the call with proxy_response_too_large, whether or not the API says the length first", async () => {
    for (const city of ["Endless", "Huge"]) {
      const result = await runCli(["proxy", "call", `cities/city/${city}`, "-p", PACKAGE, "--no-cache"], { env: env() });
      expect(result.code, city).toBe(1);
      expect(result.stdout, city).toBe("");
      expect(result.stderr, city).toContain(`lllm: error: cities/city/${city} answered more than 64 MB, the most one call returns: ask for less data`);
    }
  });

  it("prints one JSON object with --json", async () => {
    const result = await runCli(["proxy", "call", "cities/city/Endless", "-p", PACKAGE, "--no-cache", "--json"], { env: env() });
    expect(result.code, result.stderr).toBe(1);
    expect((JSON.parse(result.stdout) as { error: { code: string } }).error.code).toBe("proxy_response_too_large");
  });
});
