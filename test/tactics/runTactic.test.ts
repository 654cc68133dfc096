import path from "node:path";
import { describe, expect, it } from "vitest";
import { prepareTactic } from "../../src/tactics/prepareTactic.js";
import { runTactic } from "../../src/tactics/runTactic.js";
import { ScriptedModel } from "../../src/testing/index.js";
import { ROOT, emptyHome } from "../helpers/runCli.js";

describe("runTactic", () => {
  it("builds fresh agents for every run (seed Step 15): the second run starts with an empty dialog", async () => {
    const prepared = await prepareTactic(path.join(ROOT, "test/fixtures/run/loop.yaml"), { home: emptyHome() });
    const model = new ScriptedModel([{ tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }] }, "Sunny in Paris.", "Hello again."]);
    const first = await runTactic(prepared, { input: "Paris?", createModel: () => model });
    const second = await runTactic(prepared, { input: "Hi", createModel: () => model });
    expect([first.output, second.output]).toEqual(["Sunny in Paris.", "Hello again."]);
    expect(model.requests[2]!.messages).toEqual([
      { role: "system", content: "You are a weather assistant." },
      { role: "user", content: "Hi" },
    ]);
    model.assertComplete();
  });
});
