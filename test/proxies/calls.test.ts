import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import path from "node:path";
import { ProxyCallError, ProxyManager, proxy, type ProxyManagerOptions } from "../../src/proxies/index.js";
import { loadProxyFile } from "../../src/registry/loadProxyFile.js";
import { startRecordingServer, type RecordingServer } from "./fixtures/recordingServer.js";
import { HEADER_YAML, STOCKS_YAML, tempHome, yamlProxy } from "./fixtures/proxies.js";

const KEY = "stocks-secret-key-123";
let server: RecordingServer;

beforeAll(async () => {
  server = await startRecordingServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.reply = (request) => ({ body: { ok: true, path: request.pathname } });
});

function manager(options: Partial<ProxyManagerOptions> = {}): ProxyManager {
  return new ProxyManager({
    proxies: [yamlProxy(STOCKS_YAML), yamlProxy(HEADER_YAML, "news.yaml")],
    useCache: false,
    home: tempHome(),
    env: { STOCKS_KEY: KEY, NEWS_KEY: "news-secret-key-456", LLLM_PROXY_STOCKS_BASE_URL: `${server.url}/api`, LLLM_PROXY_NEWS_BASE_URL: server.url },
    ...options,
  });
}

async function failure(promise: Promise<unknown>): Promise<ProxyCallError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProxyCallError);
  return error as ProxyCallError;
}

describe("ProxyManager.call over HTTP", () => {
  it("fills the placeholder from the path and adds the key as a query parameter, host-side", async () => {
    const result = await manager().call("stocks/profile/MSFT", {});
    expect(result).toEqual({ ok: true, path: "/api/profile/MSFT" });
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request!.method).toBe("GET");
    expect(request!.query).toEqual({ apikey: KEY });
    expect(request!.headers["x-client"]).toBe("lllm-test");
  });

  it("sends params in the query string after defaults, and the key last", async () => {
    await manager().call("stocks/prices/daily", { symbol: "AAPL" });
    expect(server.requests[0]!.url).toBe(`/api/prices/daily?days=5&symbol=AAPL&apikey=${KEY}`);
  });

  it("uses the fetch it is given, and the agent's code cannot replace the key", async () => {
    const urls: string[] = [];
    const fake = (async (input: string | URL | Request) => {
      urls.push(String(input));
      return new Response(JSON.stringify({ faked: true }), { status: 200 });
    }) as typeof fetch;
    expect(await manager({ fetch: fake }).call("stocks/profile/AAPL", { apikey: "stolen" })).toEqual({ faked: true });
    expect(urls).toEqual([`${server.url}/api/profile/AAPL?apikey=${KEY}`]);
    expect(server.requests).toHaveLength(0);
  });

  it("sends the key as a header when its name starts with *, and POST params as a JSON body", async () => {
    await manager().call("news/search", { query: "apple", page: 2 });
    const [request] = server.requests;
    expect(request!.method).toBe("POST");
    expect(request!.headers["x-api-key"]).toBe("news-secret-key-456");
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(request!.body)).toEqual({ query: "apple", page: 2 });
    expect(request!.query).toEqual({});
  });

  it("POST with a query-parameter key keeps the key out of the body", async () => {
    await manager().call("stocks/orders", { symbols: ["AAPL", "MSFT"] });
    const [request] = server.requests;
    expect(JSON.parse(request!.body)).toEqual({ symbols: ["AAPL", "MSFT"] });
    expect(request!.query).toEqual({ apikey: KEY });
  });

  it("encodes a placeholder value as one segment: BRK/A -> BRK%2FA (from params or from the path)", async () => {
    await manager().call("stocks/profile/{symbol}", { symbol: "BRK/A" });
    await manager().call("stocks/profile/BRK%2FA", {});
    await manager().call("stocks/search/name/s%26p 500", {});
    expect(server.requests.map((request) => request.url.split("?")[0])).toEqual(["/api/profile/BRK%2FA", "/api/profile/BRK%2FA", "/api/search/name/s%26p%20500"]);
    // The value travels in the path only.
    expect(server.requests[0]!.query).toEqual({ apikey: KEY });
  });

  it.each([
    ["..", "stocks/profile/..", {}],
    [".", "stocks/profile/{symbol}", { symbol: "." }],
    ["empty", "stocks/profile/{symbol}", { symbol: "" }],
  ])("refuses a %s placeholder value before sending anything", async (_what, path, params) => {
    const error = await failure(manager().call(path, params));
    expect(error.code).toBe("proxy_path_value");
    expect(error.pythonType).toBe("ValueError"); // what CALL_API raises in Python (seed 000, Step 12)
    expect(error.message).toContain("symbol");
    expect(server.requests).toHaveLength(0);
  });

  it("checks required params, naming the param and the endpoint, before sending", async () => {
    const error = await failure(manager().call("stocks/prices/daily", { days: 3 }));
    expect(error.code).toBe("proxy_param_missing");
    expect(error.message).toBe('missing required parameter `symbol` for stocks/prices/daily: pass it in params, e.g. {"symbol":"AAPL"}');
    expect(server.requests).toHaveLength(0);
  });

  it("an unknown endpoint lists the proxy's endpoints, closest first", async () => {
    const error = await failure(manager().call("stocks/profil/AAPL", {}));
    expect(error.code).toBe("proxy_endpoint_unknown");
    expect(error.message).toContain("has no endpoint `profil/AAPL`. Its endpoints: profile/{symbol}, prices/daily, orders, search/{kind}/{term}.");
  });

  it("an unknown proxy lists the available ones", async () => {
    const error = await failure(manager().call("stock/profile/AAPL", {}));
    expect(error.code).toBe("proxy_unknown");
    expect(error.message).toBe("no proxy named `stock`. Did you mean `stocks`? Available proxies: news, stocks");
  });

  it("a missing key names the variable, only when the proxy is called", async () => {
    const withoutKey = manager({ env: { LLLM_PROXY_STOCKS_BASE_URL: server.url } });
    expect(withoutKey.available()).toEqual(["news", "stocks"]);
    const error = await failure(withoutKey.call("stocks/profile/AAPL", {}));
    expect(error.code).toBe("proxy_key_missing");
    expect(error.message).toContain("STOCKS_KEY");
    expect(server.requests).toHaveLength(0);
  });

  it("an HTTP error becomes an error with the status and the start of the body, with the key removed", async () => {
    server.reply = () => ({ status: 500, body: { error: `database is down (request had apikey=${KEY})` } });
    const error = await failure(manager().call("stocks/profile/AAPL", {}));
    expect(error.code).toBe("proxy_http_error");
    expect(error.status).toBe(500);
    expect(error.message).toBe('stocks/profile/AAPL failed with HTTP 500 Internal Server Error: {"error":"database is down (request had apikey=[redacted])"}');
  });

  it("returns text when the answer is not JSON", async () => {
    server.reply = () => ({ body: "Paris is the capital of France." });
    expect(await manager().call("stocks/profile/AAPL")).toBe("Paris is the capital of France.");
  });

  it("a slow answer fails after timeoutMs", async () => {
    server.reply = () => ({ delayMs: 2_000, body: { late: true } });
    const error = await failure(manager({ timeoutMs: 200 }).call("stocks/profile/AAPL", {}));
    expect(error.code).toBe("proxy_timeout");
    expect(error.message).toBe("stocks/profile/AAPL did not answer within 0.2 s: try again, or ask for less data");
  });

  it("an unreachable API is a network error", async () => {
    const error = await failure(manager({ env: { STOCKS_KEY: KEY, LLLM_PROXY_STOCKS_BASE_URL: "http://127.0.0.1:1" } }).call("stocks/profile/AAPL", {}));
    expect(error.code).toBe("proxy_network_error");
    expect(error.message).toContain("stocks/profile/AAPL could not be reached");
  });
});

describe("TypeScript proxies with a base URL", () => {
  it("handle() adjusts the params to send, and callApi() can wrap the request", async () => {
    const seen: string[] = [];
    const definition = proxy({
      path: "wrapped",
      name: "Wrapped",
      description: "A proxy with hooks.",
      baseUrl: "https://unused.example.com",
      endpoints: [
        {
          category: "c",
          endpoint: "items/{id}",
          description: "An item.",
          params: { "id*": ["string", "1"], limit: ["integer", 3] },
          handle: (params, context) => {
            seen.push(`${context.proxy}:${context.endpoint.endpoint}:${String(context.deployMode)}`);
            return { ...params, limit: Math.min(Number(params.limit ?? 10), 5) };
          },
        },
      ],
      callApi: async (request, context) => ({ wrapped: await context.send({ ...request, headers: { ...request.headers, "x-extra": "1" } }) }),
    });
    const manager = new ProxyManager({ proxies: [definition], useCache: false, deployMode: true, env: { LLLM_PROXY_WRAPPED_BASE_URL: server.url } });
    const result = await manager.call("wrapped/items/7", { limit: 50 });
    expect(result).toEqual({ wrapped: { ok: true, path: "/items/7" } });
    expect(server.requests[0]!.url).toBe("/items/7?limit=5");
    expect(server.requests[0]!.headers["x-extra"]).toBe("1");
    expect(seen).toEqual(["wrapped:items/{id}:true"]);
  });
});

describe("the Step 12 example (packages-example/weather/proxies/weather_api.yaml)", () => {
  it("sends GET <base>/current/Tokyo?units=metric&api_key=... and returns the JSON answer", async () => {
    server.reply = () => ({ body: { temperature: 18.2, condition: "cloudy" } });
    const proxies = await loadProxyFile(path.resolve("packages-example/weather/proxies/weather_api.yaml"));
    const manager = new ProxyManager({ proxies, home: tempHome(), env: { WEATHER_API_KEY: "weather-key-789", LLLM_PROXY_WEATHER_API_BASE_URL: `${server.url}/weather` } });
    expect(await manager.call("weather_api/current/Tokyo", {})).toEqual({ temperature: 18.2, condition: "cloudy" });
    expect(server.requests.map((request) => `${request.method} ${request.url}`)).toEqual(["GET /weather/current/Tokyo?units=metric&api_key=weather-key-789"]);
  });
});
