import path from "node:path";
import { describe, expect, it } from "vitest";
import { ProxyCallError, ProxyManager, proxy } from "../../src/proxies/index.js";
import { loadProxyFile } from "../../src/registry/loadProxyFile.js";
import { tempHome } from "./fixtures/proxies.js";

const WEATHER_TS = path.resolve("packages-example/weather/proxies/weather.ts");

/** Step 13 of the seed, character for character (the dash before each description is an en dash). */
const STEP_13_DOCS = `## Weather API (weather)
Current weather and forecasts for any city.
- **current/{city}** [GET] – Current temperature and conditions for a city.
    - \`city*\` (str) e.g. London
    - \`units\` (str) e.g. celsius
- **forecast/daily** [GET] – Daily forecast for a city.
    - \`city*\` (str) e.g. London
    - \`days\` (int) e.g. 5`;

async function weatherManager(): Promise<ProxyManager> {
  const proxies = await loadProxyFile(WEATHER_TS, { packageName: "weather" });
  return new ProxyManager({ proxies, activateProxies: ["weather"], home: tempHome(), env: {} });
}

describe("the Step 11 weather proxy (packages-example/weather/proxies/weather.ts)", () => {
  it("loads as one TypeScript proxy", async () => {
    const [definition, ...rest] = await loadProxyFile(WEATHER_TS);
    expect(rest).toEqual([]);
    expect(definition).toMatchObject({ path: "weather", name: "Weather API", source: { kind: "code", file: WEATHER_TS } });
  });

  it("documents itself exactly as Step 13 prints it", async () => {
    const manager = await weatherManager();
    expect(manager.available()).toEqual(["weather"]);
    expect(manager.retrieveApiDocs("weather")).toBe(STEP_13_DOCS);
    expect(manager.retrieveApiDocs()).toBe(STEP_13_DOCS);
  });

  it("computes its answers: the city from the path, the days from params", async () => {
    const manager = await weatherManager();
    expect(await manager.call("weather/current/Tokyo", {})).toEqual({ city: "Tokyo", temperature: 18, condition: "cloudy" });
    const forecast = await manager.call("weather/forecast/daily", { city: "Tokyo", days: 2 });
    expect(forecast).toEqual([
      { day: 1, high: 18, low: 10 },
      { day: 2, high: 19, low: 11 },
    ]);
  });

  it("still checks required params of a computed endpoint", async () => {
    const manager = await weatherManager();
    await expect(manager.call("weather/forecast/daily", { days: 2 })).rejects.toThrow("missing required parameter `city` for weather/forecast/daily");
  });

  it("an unknown proxy name in retrieveApiDocs lists the available ones", async () => {
    const manager = await weatherManager();
    const error = (() => {
      try {
        manager.retrieveApiDocs("wether");
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ProxyCallError);
    expect((error as ProxyCallError).message).toBe("no proxy named `wether`. Did you mean `weather`? Available proxies: weather");
  });
});

describe("formatApiDocs", () => {
  it("shows Python type names, Python reprs for non-strings, None for no example, and joins proxies with a blank line", () => {
    const a = proxy({
      path: "a",
      name: "A",
      description: "  First.  ",
      endpoints: [
        {
          category: "x",
          endpoint: "things",
          method: "POST",
          description: "Things.",
          params: { "ids*": ["array", ["a", "b"]], flag: ["bool", true], ratio: ["number", 0.5], options: ["object", { deep: { x: "y".repeat(80) } }], none: ["str"] },
          handle: () => null,
        },
      ],
    });
    const b = proxy({ path: "b", name: "B", description: "Second.", endpoints: [{ category: "y", endpoint: "one", description: "One.", handle: () => 1 }] });
    const manager = new ProxyManager({ proxies: [b, a], useCache: false });
    expect(manager.retrieveApiDocs()).toBe(
      [
        "## A (a)",
        "First.",
        "- **things** [POST] – Things.",
        "    - `ids*` (list) e.g. ['a', 'b']",
        "    - `flag` (bool) e.g. True",
        "    - `ratio` (float) e.g. 0.5",
        `    - \`options\` (dict) e.g. ${`{'deep': {'x': '${"y".repeat(80)}'}}`.slice(0, 60)}`,
        "    - `none` (str) e.g. None",
        "",
        "## B (b)",
        "Second.",
        "- **one** [GET] – One.",
      ].join("\n"),
    );
  });
});
