import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ProxyCache, ProxyManager, type ProxyManagerOptions } from "../../src/proxies/index.js";
import { startRecordingServer, type RecordingServer } from "./fixtures/recordingServer.js";
import { STOCKS_YAML, tempHome, yamlProxy } from "./fixtures/proxies.js";
import { tempDir } from "../helpers/tempTree.js";

const KEY = "stocks-secret-key-123";
const AS_ROOT = process.getuid?.() === 0;
if (!AS_ROOT && process.env.CI !== "true") console.warn("skipping \"in a folder another user owns are never read\" (test/proxies/cache.test.ts): it needs root, to give a folder to another user");
let server: RecordingServer;

beforeAll(async () => {
  server = await startRecordingServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.reply = (request) => ({ body: { ok: true, url: request.url.split("?")[0], n: server.requests.length } });
});

function manager(home: string, options: Partial<ProxyManagerOptions> = {}): ProxyManager {
  return new ProxyManager({ proxies: [yamlProxy(STOCKS_YAML)], home, env: { STOCKS_KEY: KEY, LLLM_PROXY_STOCKS_BASE_URL: server.url }, ...options });
}

function cacheFiles(home: string): string[] {
  const dir = path.join(home, "cache", "proxies", "stocks");
  try {
    return readdirSync(dir).map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

describe("the proxy disk cache", () => {
  it("answers a repeated call from disk and misses on different params", async () => {
    const home = tempHome();
    const proxies = manager(home);
    const first = await proxies.call("stocks/prices/daily", { symbol: "AAPL" });
    const again = await proxies.call("stocks/prices/daily", { symbol: "AAPL" });
    expect(again).toEqual(first);
    expect(server.requests).toHaveLength(1);
    await proxies.call("stocks/prices/daily", { symbol: "MSFT" });
    expect(server.requests).toHaveLength(2);
    expect(proxies.cacheStats()).toEqual({ hits: 1, misses: 2 });
    // A new manager (another run) reads the same files.
    const other = manager(home);
    await other.call("stocks/prices/daily", { symbol: "MSFT" });
    expect(server.requests).toHaveLength(2);
    expect(other.cacheStats()).toEqual({ hits: 1, misses: 0 });
  });

  it("the order of params does not matter, but their values do", async () => {
    const proxies = manager(tempHome());
    await proxies.call("stocks/prices/daily", { symbol: "AAPL", days: 3 });
    await proxies.call("stocks/prices/daily", { days: 3, symbol: "AAPL" });
    await proxies.call("stocks/prices/daily", { days: 4, symbol: "AAPL" });
    expect(server.requests).toHaveLength(2);
  });

  it("never caches an error", async () => {
    const home = tempHome();
    server.reply = () => ({ status: 503, body: "try later" });
    const proxies = manager(home);
    await expect(proxies.call("stocks/profile/AAPL", {})).rejects.toThrow(/HTTP 503/);
    expect(cacheFiles(home)).toEqual([]);
    server.reply = () => ({ body: { ok: true } });
    expect(await proxies.call("stocks/profile/AAPL", {})).toEqual({ ok: true });
    expect(server.requests).toHaveLength(2);
  });

  it("use_cache false sends every call and writes nothing", async () => {
    const home = tempHome();
    const proxies = ProxyManager.fromConfig({ use_cache: false }, { proxies: [yamlProxy(STOCKS_YAML)], home, env: { STOCKS_KEY: KEY, LLLM_PROXY_STOCKS_BASE_URL: server.url } });
    await proxies.call("stocks/profile/AAPL", {});
    await proxies.call("stocks/profile/AAPL", {});
    expect(server.requests).toHaveLength(2);
    expect(cacheFiles(home)).toEqual([]);
  });

  it("a cache entry never contains the key, and only whole entries exist after concurrent writes", async () => {
    const home = tempHome();
    server.reply = (request) => ({ delayMs: 5, body: { symbol: request.pathname, rows: Array.from({ length: 200 }, (_, index) => index) } });
    // Two runs at once asking for the same and for different things.
    const runs = [manager(home), manager(home)];
    await Promise.all(runs.flatMap((proxies) => ["AAPL", "MSFT", "GOOG", "AAPL"].map((symbol) => proxies.call(`stocks/profile/${symbol}`, {}))));
    const files = cacheFiles(home);
    expect(files.map((file) => path.basename(file)).every((name) => /^[0-9a-f]{64}\.json$/.test(name))).toBe(true);
    expect(files).toHaveLength(3);
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      expect(text).not.toContain(KEY);
      expect(JSON.parse(text)).toMatchObject({ method: "GET", value: { rows: expect.any(Array) } });
    }
  });

  it("a broken entry is a miss, not a failure", async () => {
    const home = tempHome();
    const proxies = manager(home);
    await proxies.call("stocks/profile/AAPL", {});
    const [file] = cacheFiles(home);
    writeFileSync(file!, '{"value": [1, 2');
    expect(await proxies.call("stocks/profile/AAPL", {})).toMatchObject({ ok: true });
    expect(server.requests).toHaveLength(2);
  });

  it("writes entries readable by this user alone, in folders of this user's alone", async () => {
    const home = tempHome();
    await manager(home).call("stocks/profile/AAPL", {});
    const [file] = cacheFiles(home);
    expect(statSync(file!).mode & 0o777).toBe(0o600);
    for (const folder of [path.join(home, "cache", "proxies"), path.join(home, "cache", "proxies", "stocks")]) expect(statSync(folder).mode & 0o777).toBe(0o700);
  });

  describe("planted entries (issue 19 item 11)", () => {
    /** An entry for the call `stocks/profile/AAPL` as another run would write it, with a forged answer. */
    async function plant(home: string, folder: (proxies: string) => void): Promise<void> {
      // Learn the entry's name from a real run, then start over with a planted folder holding a forged answer.
      const probeHome = tempHome();
      await manager(probeHome).call("stocks/profile/AAPL", {});
      const name = path.basename(cacheFiles(probeHome)[0]!);
      server.requests.length = 0;
      const proxies = path.join(home, "cache", "proxies");
      folder(proxies);
      writeFileSync(path.join(proxies, "stocks", name), JSON.stringify({ method: "GET", url: "x", params: {}, value: { forged: true } }));
    }

    it.each([
      ["a world-writable cache folder", (proxies: string) => {
        mkdirSync(path.join(proxies, "stocks"), { recursive: true });
        chmodSync(proxies, 0o777);
      }],
      ["a world-writable proxy folder", (proxies: string) => {
        mkdirSync(path.join(proxies, "stocks"), { recursive: true });
        chmodSync(path.join(proxies, "stocks"), 0o777);
      }],
      ["a symlinked cache folder", (proxies: string) => {
        const elsewhere = tempDir("lllm-planted-");
        mkdirSync(path.join(elsewhere, "stocks"), { recursive: true });
        mkdirSync(path.dirname(proxies), { recursive: true });
        symlinkSync(elsewhere, proxies);
      }],
      ["a symlinked proxy folder", (proxies: string) => {
        const elsewhere = tempDir("lllm-planted-");
        mkdirSync(proxies, { recursive: true });
        symlinkSync(elsewhere, path.join(proxies, "stocks"));
      }],
    ])("in %s are never read, and nothing is written there", async (_name, folder) => {
      const home = tempHome();
      await plant(home, folder);
      const proxies = manager(home);
      expect(await proxies.call("stocks/profile/AAPL", {})).toMatchObject({ ok: true });
      expect(await proxies.call("stocks/profile/AAPL", {})).toMatchObject({ ok: true });
      expect(server.requests).toHaveLength(2); // no cache: both calls reached the API
      expect(cacheFiles(home)).toHaveLength(1); // the planted entry alone
    });

    // Only root can give a folder to another user. CI runs as root (.ci/run), so there this test never skips: as
    // anyone else it fails, saying why; a developer's run says that it skipped.
    it.skipIf(!AS_ROOT && process.env.CI !== "true")("in a folder another user owns are never read", async () => {
      expect(AS_ROOT, "this test needs root (it chowns a folder to nobody); CI runs the suite as root").toBe(true);
      const home = tempHome();
      await plant(home, (proxies) => {
        mkdirSync(path.join(proxies, "stocks"), { recursive: true, mode: 0o700 });
        chownSync(path.join(proxies, "stocks"), 65534, 65534);
      });
      const proxies = manager(home);
      expect(await proxies.call("stocks/profile/AAPL", {})).toMatchObject({ ok: true });
      expect(server.requests).toHaveLength(1);
      expect(lstatSync(path.join(home, "cache", "proxies", "stocks")).uid).toBe(65534);
    });
  });

  it("keys entries by method, URL and params only", () => {
    const base = { method: "GET", url: "https://x/a", params: { a: 1, b: [1, 2] } };
    expect(ProxyCache.keyOf(base)).toBe(ProxyCache.keyOf({ ...base, params: { b: [1, 2], a: 1 } }));
    expect(ProxyCache.keyOf(base)).not.toBe(ProxyCache.keyOf({ ...base, method: "POST" }));
    expect(ProxyCache.keyOf(base)).not.toBe(ProxyCache.keyOf({ ...base, url: "https://x/b" }));
  });
});
