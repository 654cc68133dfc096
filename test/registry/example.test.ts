import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Registry } from "../../src/registry/index.js";
import { FunctionCall } from "../../src/tools/index.js";
import { tempTree } from "./fixtures/tree.js";

const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../packages-example");

async function loadWeather(): Promise<Registry> {
  const empty = tempTree();
  return Registry.load({ packages: [path.join(EXAMPLES, "weather")], cwd: empty, home: empty });
}

describe("packages-example/weather", () => {
  it("loads weather (lllm.toml) and its dependency search (lllm.yaml) under the alias `search`", async () => {
    const registry = await loadWeather();
    expect(registry.list().map((pkg) => [pkg.name, pkg.manifest.version])).toEqual([
      ["weather", "0.1.0"],
      ["search", "0.1.0"],
    ]);
    expect(registry.packages.get("weather")!.dependencies.get("search")?.dir).toBe(path.join(EXAMPLES, "search"));
  });

  it("binds the web_search declaration of weather to the search package's implementation", async () => {
    const registry = await loadWeather();
    const resolved = registry.resolveTool("weather.tools:web_search");
    expect(resolved.entry?.kind).toBe("declaration");
    expect(resolved.entry?.file).toBe(path.join(EXAMPLES, "weather", "tools", "web_search.yaml"));
    expect(resolved.tool.isDeclaration).toBe(false);
    expect(resolved.tool.description).toBe("Search the web for information");
    const call = await resolved.tool.call(new FunctionCall({ name: "web_search", arguments: { query: "rain in Paris" } }));
    expect(call.error).toBeUndefined();
    expect(call.result).toBe("Top results for 'rain in Paris'");
  });

  it("resolves the implementation as search.tools:web_search, and the bare name to the declaration", async () => {
    const registry = await loadWeather();
    const implementation = registry.resolveTool("search.tools:web_search");
    expect(implementation.entry).toMatchObject({ kind: "code", packageName: "search", file: path.join(EXAMPLES, "search", "tools", "web_search.ts") });
    expect((await implementation.tool.call(new FunctionCall({ name: "web_search", arguments: { query: "q" } }))).result).toBe("Top results for 'q'");
    expect(registry.resolveTool("web_search").ref).toBe("weather.tools:web_search");
  });

  it("indexes the example's tools, prompts and tactics", async () => {
    const registry = await loadWeather();
    expect(registry.packages.get("weather")!.tools().map((entry) => `${entry.name}:${entry.kind}`)).toEqual([
      "divide:code",
      "draw:code",
      "forecast:command",
      "get_weather:code",
      "to_fahrenheit:code",
      "weather_brief:code",
      "web_search:declaration",
    ]);
    expect(registry.resolveEntry("prompts", "weather.prompts:system").file).toBe(path.join(EXAMPLES, "weather", "prompts", "system.md"));
    expect(registry.resolveEntry("tactics", "common").file).toBe(path.join(EXAMPLES, "weather", "tactics", "common.yaml"));
    expect(registry.packageOfFile(path.join(EXAMPLES, "weather", "tactics", "weather.yaml"))?.name).toBe("weather");
    const weather = await registry.resolveTool("get_weather", { from: "weather" }).tool.call(new FunctionCall({ name: "get_weather", arguments: { city: "Paris" } }));
    expect(weather.result).toBe("Sunny, 22 degrees celsius in Paris");
  });
});
