import { readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FunctionCall, tool } from "../../src/tools/index.js";
import { useValidatorCache } from "../../src/util/sharedAjv.js";
import { tempDir } from "../helpers/tempTree.js";

// The CLI keeps tools' argument validators on disk as ajv's generated code, so a later run loads no compiler. A
// validator read back from the cache must behave exactly like a compiled one: same defaults, same messages.
const folder = tempDir("lllm-validators-");
afterAll(() => {
  useValidatorCache(undefined);
  rmSync(folder, { recursive: true, force: true });
});

const makeTool = () =>
  tool({
    name: "get_weather",
    description: "",
    parameters: {
      city: { type: "string" },
      unit: { type: "string", enum: ["celsius", "fahrenheit"], default: "celsius" },
      when: { type: "string", format: "date", default: "2026-01-01" },
      points: { type: "array", items: { type: "object", properties: { x: { type: "number" } }, required: ["x"] }, default: [] },
    },
    run: ({ city, unit, when }) => `${String(city)} ${String(unit)} ${String(when)}`,
  });

const calls: Array<Record<string, unknown>> = [
  { city: "Paris" },
  { city: "Paris", unit: "kelvin" },
  { cty: "Paris" },
  { city: "Paris", when: "yesterday" },
  { city: "Paris", points: [{ y: 1 }] },
  { city: 5, town: "Lyon" },
];

async function results(): Promise<string[]> {
  const weather = makeTool();
  return Promise.all(
    calls.map(async (args) => {
      const call = await weather.call(new FunctionCall({ name: "get_weather", arguments: args }));
      return call.error ?? String(call.result);
    }),
  );
}

describe("the validator cache", () => {
  it("gives the same results and messages from the cache as from a fresh compile", async () => {
    useValidatorCache(undefined);
    const compiled = await results();
    expect(compiled[0]).toBe("Paris celsius 2026-01-01");
    expect(compiled[3]).toBe("Invalid arguments for get_weather: argument 'when' must match format \"date\"");

    useValidatorCache(folder);
    const stored = await results(); // compiles, and writes the generated code
    expect(readdirSync(folder).filter((name) => name.endsWith(".cjs"))).toHaveLength(1);
    const loaded = await results(); // read back from the folder
    expect(stored).toEqual(compiled);
    expect(loaded).toEqual(compiled);
  });

  it("ignores a cache file it cannot use, and compiles instead", async () => {
    useValidatorCache(folder);
    const [file] = readdirSync(folder);
    const { writeFileSync } = await import("node:fs");
    writeFileSync(path.join(folder, file!), "this is not javascript {");
    expect((await results())[0]).toBe("Paris celsius 2026-01-01");
  });
});
