import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../src/testing/index.js";
import { ROOT, runCli } from "../helpers/runCli.js";

let model: MockOpenAIServer | undefined;
let api: Server | undefined;
afterEach(async () => {
  await model?.close();
  await new Promise((resolve) => (api ? api.close(resolve) : resolve(undefined)));
  api = undefined;
});

/** A local weather API that records what it was asked. */
async function startWeatherApi(): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  api = createServer((request, response) => {
    seen.push(request.url ?? "");
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({ temperature: 21.5, condition: "sunny" }));
  });
  await new Promise<void>((resolve) => api!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(api.address() as AddressInfo).port}/weather`, seen };
}

type Wire = { role: string; content: string };

describe("lllm run with proxies: query_api_doc, then run_python with CALL_API", () => {
  it("reads the docs, runs Python twice reusing a variable, reaches an HTTP API with the key added host-side", async () => {
    const weatherApi = await startWeatherApi();
    model = await startMockOpenAIServer({
      script: [
        { tool_calls: [{ name: "query_api_doc", arguments: { proxy_name: "weather" } }] },
        { tool_calls: [{ name: "run_python", arguments: { code: 'tokyo = CALL_API("weather/current/Tokyo", {})\nlive = CALL_API("weather_api/current/Oslo", {})\nprint(tokyo["temperature"], live["condition"])' } }] },
        { tool_calls: [{ name: "run_python", arguments: { code: 'import os\nprint("Tokyo is", tokyo["condition"], "| key visible:", os.environ.get("WEATHER_API_KEY"))' } }] },
        "Tokyo is cloudy; Oslo is sunny.",
      ],
    });
    const result = await runCli(["run", path.join(ROOT, "test/fixtures/run/proxy.yaml"), "--input", "Tokyo and Oslo?"], {
      env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: model.url, WEATHER_API_KEY: "secret-weather-key", LLLM_PROXY_WEATHER_API_BASE_URL: weatherApi.url },
    });
    expect(result.stdout).toBe("Tokyo is cloudy; Oslo is sunny.\n");
    expect(result.code).toBe(0);
    const posts = model.requests.filter((request) => request.method === "POST");
    const system = (posts[0]!.body.messages as Wire[])[0]!.content;
    expect(system).toContain("You are a weather analyst.");
    expect(system).toContain("## Weather API (weather)");
    expect(system).toContain("- **current/{city}** [GET] – Current temperature and conditions for a city.");
    const toolResults = (posts[3]!.body.messages as Wire[]).filter((message) => message.role === "tool").map((message) => message.content);
    expect(toolResults[0]).toContain("## Weather API (weather)\nCurrent weather and forecasts for any city.");
    expect(toolResults[1]).toContain("---\n18 sunny\n\n---");
    expect(toolResults[2]).toContain("Tokyo is cloudy | key visible: None");
    expect(weatherApi.seen).toEqual(["/weather/current/Oslo?units=metric&api_key=secret-weather-key"]);
  });

  it("lllm exec runs Python with CALL_API from standard input", async () => {
    const result = await runCli(["exec", "--proxy", "weather", "-p", "packages-example/weather"], { input: 'r = CALL_API("weather/forecast/daily", {"city": "Tokyo", "days": 2})\nprint(len(r), r[1]["high"])\n' });
    expect(result).toMatchObject({ code: 0, stdout: "2 19\n" });
  });

  it("lllm proxy docs prints the documentation of Step 13 exactly", async () => {
    const result = await runCli(["proxy", "docs", "weather", "-p", "packages-example/weather"]);
    expect(result.stdout).toBe(
      [
        "## Weather API (weather)",
        "Current weather and forecasts for any city.",
        "- **current/{city}** [GET] – Current temperature and conditions for a city.",
        "    - `city*` (str) e.g. London",
        "    - `units` (str) e.g. celsius",
        "- **forecast/daily** [GET] – Daily forecast for a city.",
        "    - `city*` (str) e.g. London",
        "    - `days` (int) e.g. 5",
        "",
      ].join("\n"),
    );
  });
});
