import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { prepareTactic, runRecorded, runTactic } from "../../src/index.js";
import { expectRun, RunAssertionError, ScriptedModel } from "../../src/testing/index.js";
import { EXAMPLE } from "../helpers/paths.js";

const weather = path.join(EXAMPLE, "weather/tactics/weather.yaml");
const turns = () => [{ tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }, { name: "get_weather", arguments: { city: "Tokyo" } }] }, "Sunny, 22 degrees in Paris and in Tokyo."];

describe("expectRun (lllm/testing): the assertions of lllm test in vitest", () => {
  it("checks a run of runRecorded with the same handlers and reasons, negation included", async () => {
    vi.stubEnv("LLLM_LOG", "0");
    const prepared = await prepareTactic(weather);
    const model = new ScriptedModel(turns());
    const run = await runRecorded(prepared, { input: "Weather in Paris and Tokyo?", createModel: () => model, warn: () => {} });
    vi.unstubAllEnvs();
    expectRun(run).toHaveCalledTool("get_weather", { city: "Tokyo" });
    expectRun(run).toHaveCalledToolsInOrder(["get_weather", "get_weather"]);
    expectRun(run).toHaveAtMostToolCalls(2);
    expectRun(run).toContain("Tokyo");
    expectRun(run).toMatch(/\d+ degrees/);
    expectRun(run).not.toContain("error");
    expectRun(run).not.toHaveCalledTool("to_fahrenheit");
    expectRun(run).toUseAtMostTokens(10_000);
    expect(() => expectRun(run).toHaveCalledTool("get_weather", { city: "Oslo" })).toThrow('expected the run to pass tool-called get_weather {"city":"Oslo"}: get_weather with {"city":"Oslo"} was not called; the calls were: get_weather({"city":"Paris"}), get_weather({"city":"Tokyo"})');
    expect(() => expectRun(run).not.toContain("Paris")).toThrow('expected the run not to pass contains "Paris": the answer contains "Paris"');
    // A scripted model has no price: the cost is unknown, so no limit can be shown to hold.
    expect(() => expectRun(run).toCostAtMost(1)).toThrow("the cost is unknown");
    let error: unknown;
    try {
      expectRun(run).toEqual("Rain.");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RunAssertionError);
    expect(error).toMatchObject({ name: "AssertionError", expected: "Rain.", actual: "Sunny, 22 degrees in Paris and in Tokyo.", showDiff: true });
  });

  it("checks a runTactic result, and any assertion of a test file with toPass (a judge with its model)", async () => {
    const prepared = await prepareTactic(weather);
    const result = await runTactic(prepared, { input: "Weather?", createModel: () => new ScriptedModel(turns()) });
    expectRun(result).toHaveCalledTool("get_weather");
    const judge = new ScriptedModel(['{"pass": true, "score": 1, "reason": "fine"}', '{"pass": false, "score": 0, "reason": "no Oslo"}']);
    await expectRun(result, { input: "Weather?", judgeModel: judge }).toPass({ judge: "Names both cities" });
    await expect(expectRun(result, { judgeModel: judge }).toPass({ judge: "Names Oslo" })).rejects.toThrow("judge (score 0): no Oslo");
    await expect(expectRun(result).toPass({ "not-contains": "Paris" })).rejects.toThrow('the answer contains "Paris"');
    await expect(expectRun(result).toPass({ contians: "x" })).rejects.toThrow("unknown assertion type `contians`");
  });
});
