import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { ProxyManager, builtinProxies, proxy } from "../../src/proxies/index.js";
import { startRecordingServer, type RecordingServer } from "./fixtures/recordingServer.js";
import { tempHome } from "./fixtures/proxies.js";

let server: RecordingServer;

beforeAll(async () => {
  server = await startRecordingServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.reply = () => ({ body: { ok: true } });
});

async function builtins(cutoffDate: string | undefined): Promise<ProxyManager> {
  return new ProxyManager({
    proxies: await builtinProxies(),
    useCache: false,
    ...(cutoffDate ? { cutoffDate } : {}),
    env: {
      FRED_API_KEY: "fred-key-0000",
      FMP_API_KEY: "fmp-key-0000",
      SEARCH_API_KEY: "search-key-0000",
      LLLM_PROXY_FRED_BASE_URL: `${server.url}/fred`,
      LLLM_PROXY_FMP_BASE_URL: `${server.url}/fmp`,
      LLLM_PROXY_GT_BASE_URL: `${server.url}/gt`,
    },
  });
}

describe("cutoff_date", () => {
  it("FRED: observation_end and the real-time period default to the cutoff", async () => {
    await (await builtins("2020-06-30")).call("fred/series/observations", { series_id: "GDPC1" });
    const [request] = server.requests;
    expect(request!.pathname).toBe("/fred/series/observations");
    expect(request!.query).toEqual({
      file_type: "json",
      series_id: "GDPC1",
      observation_end: "2020-06-30",
      realtime_start: "2020-06-30",
      realtime_end: "2020-06-30",
      api_key: "fred-key-0000",
    });
  });

  it("FRED: a later observation_end is clamped, an earlier one kept; start dates after the cutoff are clamped too", async () => {
    const manager = await builtins("2020-06-30");
    await manager.call("fred/series/observations", { series_id: "GDPC1", observation_start: "2021-01-01", observation_end: "2024-01-01" });
    await manager.call("fred/series/observations", { series_id: "GDPC1", observation_start: "2010-01-01", observation_end: "2019-12-31" });
    expect(server.requests.map((request) => [request.query.observation_start, request.query.observation_end])).toEqual([
      ["2020-06-30", "2020-06-30"],
      ["2010-01-01", "2019-12-31"],
    ]);
  });

  it("without a cutoff date nothing is added", async () => {
    await (await builtins(undefined)).call("fred/series/observations", { series_id: "GDPC1" });
    expect(server.requests[0]!.query).toEqual({ file_type: "json", series_id: "GDPC1", api_key: "fred-key-0000" });
  });

  it("FMP: price history ends at the cutoff, and statements dated later are dropped", async () => {
    const manager = await builtins("2022-12-31");
    await manager.call("fmp/historical-price-full/AAPL", { from: "2022-01-01", to: "2023-06-30" });
    expect(server.requests[0]!.query).toEqual({ from: "2022-01-01", to: "2022-12-31", apikey: "fmp-key-0000" });
    server.reply = () => ({ body: [{ date: "2023-09-30", revenue: 3 }, { date: "2022-09-24", revenue: 2 }, { date: "2021-09-25", revenue: 1 }] });
    expect(await manager.call("fmp/income-statement/AAPL", { limit: 3 })).toEqual([
      { date: "2022-09-24", revenue: 2 },
      { date: "2021-09-25", revenue: 1 },
    ]);
  });

  it("Google Trends: time windows end at the cutoff and keep their length", async () => {
    const manager = await builtins("2020-03-31");
    await manager.call("gt/interest_over_time", { q: "Python" });
    await manager.call("gt/interest_over_time", { q: "Python", time: "today 3-m" });
    await manager.call("gt/interest_over_time", { q: "Python", time: "2020-01-01 2020-12-31" });
    expect(server.requests.map((request) => request.query.time)).toEqual(["2019-03-31 2020-03-31", "2019-12-31 2020-03-31", "2019-04-01 2020-03-31"]);
    expect(server.requests[0]!.pathname).toBe("/gt");
    expect(server.requests[0]!.query).toMatchObject({ engine: "google_trends", data_type: "TIMESERIES", q: "Python", api_key: "search-key-0000" });
  });

  it("a date parameter that is not a date is an error for the model", async () => {
    await expect((await builtins("2020-06-30")).call("fred/series/observations", { series_id: "X", observation_end: "last year" })).rejects.toThrow(
      '`observation_end` of fred/series/observations must be a date written YYYY-MM-DD (got "last year")',
    );
    expect(server.requests).toHaveLength(0);
  });

  it("reaches computed endpoints in their context, with deploy_mode", async () => {
    const seen: unknown[] = [];
    const clock = proxy({
      path: "clock",
      name: "Clock",
      description: "Today.",
      endpoints: [{ category: "c", endpoint: "today", description: "Today's date.", handle: (_params, context) => seen.push([context.cutoffDate, context.deployMode]) }],
    });
    await ProxyManager.fromConfig({ cutoff_date: "2024-01-01T09:30:00Z", deploy_mode: true }, { proxies: [clock], home: tempHome() }).call("clock/today");
    expect(seen).toEqual([["2024-01-01", true]]);
  });

  it.each(["2024-13-01", "2024-02-30", "yesterday", "20240101"])("an invalid cutoff date (%s) is a ConfigError", async (cutoffDate) => {
    const proxies = await builtinProxies();
    expect(() => new ProxyManager({ proxies, cutoffDate, useCache: false })).toThrow(ConfigError);
    expect(() => new ProxyManager({ proxies, cutoffDate, useCache: false })).toThrow(/cutoff_date must be an ISO date such as "2024-01-01"/);
  });
});
