import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { proxyCallCommand, proxyDocsCommand, proxyListCommand } from "../../src/cli/proxy.js";
import { ConfigError } from "../../src/errors.js";
import { startRecordingServer, type RecordingServer } from "./fixtures/recordingServer.js";
import { tempHome } from "./fixtures/proxies.js";

const PACKAGE = path.join("test", "proxies", "fixtures", "clipkg");
let server: RecordingServer;
let stdout: string;

beforeAll(async () => {
  server = await startRecordingServer();
});
afterAll(() => server.close());
beforeEach(() => {
  stdout = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    stdout += chunk.toString();
    return true;
  });
  server.requests.length = 0;
  server.reply = (request) => ({ body: { name: decodeURIComponent(request.pathname.split("/").pop() ?? ""), population: 2102650 } });
  // An empty LLLM_HOME: no discovered packages, and a fresh cache.
  vi.stubEnv("LLLM_HOME", tempHome());
  vi.stubEnv("CITIES_API_KEY", "cities-secret-key");
  vi.stubEnv("LLLM_PROXY_CITIES_BASE_URL", `${server.url}/v1`);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe("lllm proxy commands", () => {
  it("list: path, name, endpoint count and source of every proxy", async () => {
    await proxyListCommand({ package: [PACKAGE] });
    expect(stdout).toBe(
      [
        `cities  Cities API                     1 endpoint   ${path.join(PACKAGE, "proxies", "cities.yaml")}`,
        "exa     Exa Search API                 2 endpoints  (built-in)",
        "fmp     Financial Modeling Prep API    7 endpoints  (built-in)",
        "fred    Federal Reserve Economic Data  3 endpoints  (built-in)",
        "gt      Google Trends Search API       4 endpoints  (built-in)",
        "msd     Main Street Data API           4 endpoints  (built-in)",
        "wa      Wolfram Alpha API              1 endpoint   (built-in)",
        "",
      ].join("\n"),
    );
  });

  it("list --json", async () => {
    await proxyListCommand({ package: [PACKAGE], json: true });
    const { schema_version, proxies: listed } = JSON.parse(stdout) as { schema_version: number; proxies: Array<Record<string, unknown>> };
    expect(schema_version).toBe(1);
    expect(listed.find((entry) => entry.path === "cities")).toEqual({ path: "cities", name: "Cities API", endpoints: 1, source: path.join(PACKAGE, "proxies", "cities.yaml"), package: "clipkg", api_key_env: "CITIES_API_KEY" });
  });

  it("docs prints what query_api_doc returns", async () => {
    await proxyDocsCommand("cities", { package: [PACKAGE] });
    expect(stdout).toBe(
      ["## Cities API (cities)", "Facts about cities.", "- **city/{name}** [GET] – Population and country of a city.", "    - `name*` (str) e.g. Paris", "    - `fields` (str) e.g. population", ""].join("\n"),
    );
  });

  it("docs of an unknown proxy is a usage error with a suggestion", async () => {
    const error = await proxyDocsCommand("citys", { package: [PACKAGE] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).exitCode).toBe(2);
    expect((error as ConfigError).hint).toContain("did you mean `cities`?");
  });

  it("call prints the JSON result, and caches it unless --no-cache", async () => {
    await proxyCallCommand("cities/city/São Paulo", { package: [PACKAGE], params: '{"fields": "population"}' });
    expect(JSON.parse(stdout)).toEqual({ name: "São Paulo", population: 2102650 });
    expect(server.requests[0]!.url).toBe("/v1/city/S%C3%A3o%20Paulo?fields=population&key=cities-secret-key");
    await proxyCallCommand("cities/city/São Paulo", { package: [PACKAGE], params: '{"fields": "population"}' });
    expect(server.requests).toHaveLength(1);
    await proxyCallCommand("cities/city/São Paulo", { package: [PACKAGE], params: '{"fields": "population"}', cache: false });
    await proxyCallCommand("cities/city/São Paulo", { package: [PACKAGE], params: '{"fields": "population"}', noCache: true });
    expect(server.requests).toHaveLength(3);
  });

  it("call prints a text answer as text, and in {schema_version, result} with --json", async () => {
    server.reply = () => ({ body: "Paris: 2,102,650 people" });
    await proxyCallCommand("cities/city/Paris", { package: [PACKAGE], noCache: true });
    await proxyCallCommand("cities/city/Paris", { package: [PACKAGE], noCache: true, json: true });
    expect(stdout).toBe(`Paris: 2,102,650 people\n${JSON.stringify({ schema_version: 1, result: "Paris: 2,102,650 people" }, null, 2)}\n`);
  });

  it.each([
    ["{city: Paris}", "--params is not valid JSON"],
    ['["Paris"]', "--params must be a JSON object"],
  ])("bad --params %s is a ConfigError saying how to fix it", async (params, message) => {
    const error = await proxyCallCommand("cities/city/Paris", { package: [PACKAGE], params }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).exitCode).toBe(2);
    expect((error as ConfigError).message).toContain(message);
    expect((error as ConfigError).hint).toContain("--params '{\"city\": ");
    expect(server.requests).toHaveLength(0);
  });
});
