import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { Registry } from "../../src/registry/index.js";
import { ProxyManager, builtinProxies, parseProxyText, proxy, toProxyDefinition, type ProxySpec } from "../../src/proxies/index.js";
import { loadProxies } from "../../src/registry/loadProxies.js";
import { tempHome } from "./fixtures/proxies.js";
import { BUILTIN_KEY_VARIABLES } from "../../src/proxies/builtinKeyVariables.js";

const FIXTURES = path.resolve("test/proxies/fixtures");

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

async function loadError(run: () => Promise<unknown>): Promise<ConfigError> {
  const error = await run().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

async function registryOf(...dirs: string[]): Promise<Registry> {
  const empty = tempHome();
  return Registry.load({ packages: dirs.map((dir) => path.join(FIXTURES, dir)), cwd: empty, home: empty });
}

describe("declarative proxy files", () => {
  it("reports every structural problem with file:line:col and the closest key", () => {
    const error = configError(() =>
      parseProxyText(
        ["path: w", "name: W", "description: d", "base_uri: https://x", "endpoints:", "  - category: c", "    endpoint: current/{city}", "    metod: GET", "    description: d", "    params:", "      units: [strng, metric]"].join("\n"),
        path.resolve("w.yaml"),
      ),
    );
    expect(error.code).toBe("proxy_invalid");
    expect(error.problems.map((problem) => [`${problem.location?.file}:${problem.location?.line}`, problem.message, problem.hint])).toEqual([
      ["w.yaml:4", "unknown key `base_uri` at the top level", "did you mean `base_url`?"],
      ["w.yaml:8", "unknown key `metod` in endpoints[0]", "did you mean `method`?"],
      ["w.yaml:11", expect.stringContaining("endpoints[0].params.units[0] must be one of: string, integer"), "did you mean one of `string`, `str`?"],
    ]);
  });

  it("checks what the schema cannot: undeclared placeholders, endpoints answering one path, a key name without its variable", () => {
    const error = configError(() =>
      parseProxyText(
        ["path: w", "name: W", "description: d", "base_url: https://x", "api_key_name: k", "endpoints:", "  - {category: c, endpoint: \"current/{city}\", description: d}", "  - {category: c, endpoint: \"current/{town}\", description: d, params: {town: [string]}}"].join("\n"),
        path.resolve("w.yaml"),
      ),
    );
    expect(error.problems.map((problem) => `${problem.location?.line}: ${problem.message}`)).toEqual([
      "5: `api_key_name` needs `api_key_env` too",
      "7: placeholder `{city}` of `endpoint` `current/{city}` is not among the endpoint's params",
      "8: endpoints[0] and endpoints[1] both answer `current/{town}`",
    ]);
  });

  it("a YAML proxy without base_url has nothing to answer it", () => {
    const error = configError(() => parseProxyText("path: w\nname: W\ndescription: d\nendpoints:\n  - {category: c, endpoint: e, description: d}\n", path.resolve("w.yaml")));
    expect(error.message).toContain("endpoint `e` has nothing to answer it: the proxy has no `base_url`");
  });
});

describe("proxy() in TypeScript", () => {
  it("checks the spec in camelCase, with did-you-mean", () => {
    const error = configError(() => proxy({ path: "p", name: "P", description: "d", baseURL: "https://x", endpoints: [{ category: "c", endpoint: "e", description: "d", handle: 3 }] } as unknown as ProxySpec));
    expect(error.problems.map((problem) => [problem.message, problem.hint])).toEqual([
      ["unknown key `baseURL` in the spec", "did you mean `baseUrl`?"],
      ["endpoints[0].handle must be a function (params, context) => result", undefined],
    ]);
  });

  it("a plain spec object exported from a proxy file is accepted too", () => {
    const definition = toProxyDefinition({ path: "plain", name: "Plain", description: "d", endpoints: [{ category: "c", endpoint: "e", description: "d", handle: () => 1 }] });
    expect(definition?.endpoints[0]?.method).toBe("GET");
    expect(toProxyDefinition({ answer: 42 })).toBeUndefined();
  });
});

describe("loading proxies from packages", () => {
  it("two package proxies with one path are an error naming both files", async () => {
    const registry = await registryOf("dup-a", "dup-b");
    const error = await loadError(() => loadProxies(registry));
    expect(error.code).toBe("proxy_duplicate");
    expect(error.message).toContain("two proxies have the path `quotes`:");
    expect(error.message).toContain(path.join(FIXTURES, "dup-a/proxies/quotes.yaml"));
    expect(error.message).toContain(path.join(FIXTURES, "dup-b/proxies/prices.yaml"));
  });

  it("a package's proxy replaces the built-in with its path", async () => {
    const definitions = await loadProxies(await registryOf("shadow"));
    const fred = definitions.filter((definition) => definition.path === "fred");
    expect(fred).toHaveLength(1);
    expect(fred[0]!.name).toBe("My FRED mirror");
    expect(fred[0]!.source).toMatchObject({ kind: "yaml", packageName: "shadow" });
  });

  it("reports every broken file of the packages at once", async () => {
    const error = await loadError(async () => loadProxies(await registryOf("broken")));
    expect(error.problems.map((problem) => `${path.basename(problem.location?.file ?? "")}: ${problem.message}`)).toEqual([
      "helpers.ts: this file in proxies/ exports no proxy",
      "typo.yaml: missing required key `description` in endpoints[0]",
      "typo.yaml: unknown key `descriptoin` in endpoints[0]",
    ]);
  });
});

describe("built-in proxies", () => {
  const KEYS: Record<string, string> = { fred: "FRED_API_KEY", fmp: "FMP_API_KEY", exa: "EXA_API_KEY", wa: "WA_API_DEV", msd: "MSD_API_KEY", gt: "SEARCH_API_KEY" };

  it("all load, without keys, each with its key variable, which the run store's list of key variables names", async () => {
    const definitions = await builtinProxies();
    expect(Object.fromEntries(definitions.map((definition) => [definition.path, definition.apiKeyEnv]))).toEqual(KEYS);
    // The run store redacts these variables' values from its list (no file read at each run): the files' own.
    expect(BUILTIN_KEY_VARIABLES).toEqual(Object.fromEntries(definitions.map((definition) => [definition.path, definition.apiKeyEnv])));
    for (const definition of definitions) expect(definition.source?.kind).toBe("builtin");
    const manager = new ProxyManager({ proxies: definitions, useCache: false, env: {} });
    expect(manager.available()).toEqual(["exa", "fmp", "fred", "gt", "msd", "wa"]);
  });

  it("fred documents itself in the Step 13 format", async () => {
    const manager = new ProxyManager({ proxies: await builtinProxies(), activateProxies: ["fred"], useCache: false, env: {} });
    const docs = manager.retrieveApiDocs("fred");
    expect(docs.split("\n").slice(0, 1)).toEqual(["## Federal Reserve Economic Data (fred)"]);
    expect(docs).toContain("\n- **series/observations** [GET] – The observations (dated values) of a series.");
    expect(docs).toContain("\n    - `series_id*` (str) e.g. GNPCA\n    - `observation_start` (str) e.g. 2000-01-01\n");
    expect(docs).toContain("\n- **series/search** [GET] – ");
  });

  it("exa sends its key as the x-api-key header and searches with POST; fmp uses the v3 paths", async () => {
    const byPath = new Map((await builtinProxies()).map((definition) => [definition.path, definition]));
    expect(byPath.get("exa")).toMatchObject({ apiKeyName: "*x-api-key", baseUrl: "https://api.exa.ai" });
    expect(byPath.get("exa")!.endpoints.map((endpoint) => `${endpoint.method} ${endpoint.endpoint}`)).toEqual(["POST search", "POST contents"]);
    expect(byPath.get("fmp")!.baseUrl).toBe("https://financialmodelingprep.com/api/v3");
    expect(byPath.get("fmp")!.endpoints.map((endpoint) => endpoint.endpoint)).toEqual([
      "profile/{symbol}",
      "quote/{symbol}",
      "income-statement/{symbol}",
      "balance-sheet-statement/{symbol}",
      "cash-flow-statement/{symbol}",
      "historical-price-full/{symbol}",
      "stock_news",
    ]);
    expect(byPath.get("wa")).toMatchObject({ baseUrl: "https://www.wolframalpha.com/api/v1/llm-api", apiKeyName: "appid" });
    expect(byPath.get("gt")).toMatchObject({ baseUrl: "https://www.searchapi.io/api/v1/search", defaults: { engine: "google_trends" } });
  });

  it("an unknown name in activate_proxies is a ConfigError listing the available ones", async () => {
    const proxies = await builtinProxies();
    const error = configError(() => new ProxyManager({ proxies, activateProxies: ["fredd"], useCache: false }));
    expect(error.code).toBe("proxy_not_found");
    expect(error.message).toBe("activate_proxies names `fredd`, which is not a loaded proxy\n  did you mean `fred`? Available proxies: exa, fmp, fred, gt, msd, wa.");
  });
});
