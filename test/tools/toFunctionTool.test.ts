import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { FunctionCall, FunctionTool, toFunctionTool, tool } from "../../src/tools/index.js";

const echo = tool<{ text: string }>({ name: "echo", description: "Echo text", parameters: { text: { type: "string" } }, run: ({ text }) => text });

describe("toFunctionTool", () => {
  it("returns a FunctionTool of this module as it is", () => {
    expect(toFunctionTool(echo)).toBe(echo);
  });

  it("rebuilds a tool branded by another copy of the module, without instanceof", async () => {
    // What a FunctionTool from a transpiler's own copy of src/tools looks like from here: the registered brand and
    // the fields, but another class.
    const foreign = {
      [Symbol.for("lllm.tool")]: true,
      name: "shout",
      description: "Shout text",
      properties: { text: { type: "string" }, times: { type: "integer", description: "(default: 2)" } },
      required: ["text"],
      strict: false,
      defaults: { times: 2 },
      run: (args: Record<string, unknown>) => `${String(args.text).toUpperCase()}${"!".repeat(Number(args.times))}`,
      source: { file: "tools/shout.ts" },
      sideEffects: false,
      approval: "never",
    };
    expect(foreign instanceof FunctionTool).toBe(false);
    const rebuilt = toFunctionTool(foreign);
    expect(rebuilt).toBeInstanceOf(FunctionTool);
    expect(rebuilt!.toTool().function.parameters.properties).toEqual(foreign.properties);
    expect(rebuilt!.source).toEqual({ file: "tools/shout.ts" });
    expect(rebuilt!.approval).toBe("never");
    expect((await rebuilt!.call(new FunctionCall({ name: "shout", arguments: { text: "hi" } }))).result).toBe("HI!!");
  });

  it("builds a tool from a plain { name, description, parameters, run } object", async () => {
    const plain = toFunctionTool({ name: "add", description: "Add", parameters: { a: { type: "number" }, b: { type: "number" } }, run: (args: Record<string, unknown>) => Number(args.a) + Number(args.b) });
    expect(plain).toBeInstanceOf(FunctionTool);
    expect(plain!.strict).toBe(true);
    expect((await plain!.call(new FunctionCall({ name: "add", arguments: { a: 1, b: 2 } }))).result).toBe(3);
  });

  it("ignores values that are not tools", () => {
    for (const value of [undefined, null, 42, "get_weather", function helper() {}, { name: "config" }, { run: () => 1 }, [echo], new Map()]) {
      expect(toFunctionTool(value)).toBeUndefined();
    }
  });

  it("a plain object meant as a tool but invalid is a tool_invalid ConfigError", () => {
    expect(() => toFunctionTool({ name: "get weather", description: "", run: () => 1 })).toThrow(ConfigError);
    // Wrong types do not make it a helper to skip silently: it says what is wrong.
    expect(() => toFunctionTool({ name: 5, run: 7 })).toThrow(/a tool needs a `name` \(a string\), got 5/);
    expect(() => toFunctionTool({ name: "t", description: "d", run: 7 })).toThrow(/`run` must be a function, got number/);
  });

  it("copies keep the brand, so tools survive being spread into a new FunctionTool", () => {
    const copy = new FunctionTool({ ...echo, source: { file: "x.ts" } });
    expect((copy as unknown as Record<symbol, unknown>)[Symbol.for("lllm.tool")]).toBe(true);
    expect(copy.toTool()).toEqual(echo.toTool());
  });
});

describe("invalid tool specs say what is wrong and how to fix it", () => {
  const invalid = (spec: unknown): ConfigError => {
    try {
      tool(spec as never);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).code).toBe("tool_invalid");
      return error as ConfigError;
    }
    throw new Error("tool() accepted an invalid spec");
  };

  it("no name", () => {
    const error = invalid({ description: "x", run: () => 1 });
    expect(error.message).toBe("a tool needs a `name`");
    expect(error.hint).toMatch(/letters, digits, _ or -/);
  });

  it("a name providers reject, with a suggested spelling", () => {
    const error = invalid({ name: "get weather!", description: "x", run: () => 1 });
    expect(error.message).toBe("tool name `get weather!` is not valid: names must match ^[a-zA-Z0-9_-]{1,64}$ (letters, digits, _ and -, at most 64 characters)");
    expect(error.hint).toBe("Rename it, e.g. `get_weather`.");
    expect(invalid({ name: "x".repeat(65), description: "", run: () => 1 }).message).toMatch(/is not valid/);
  });

  it("a required entry that is not a parameter", () => {
    const error = invalid({ name: "get_weather", description: "", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["cty"] }, run: () => 1 });
    expect(error.message).toBe("tool `get_weather`: `required` lists `cty`, which is not a parameter (did you mean `city`?)");
    expect(error.hint).toMatch(/The parameters are `city`/);
  });

  it("a run that is not a function", () => {
    expect(invalid({ name: "t", description: "", run: "python3 t.py" }).message).toBe("tool `t`: `run` must be a function, got string");
  });

  it("parameters that are not schemas", () => {
    expect(invalid({ name: "t", description: "", parameters: { city: "string" }, run: () => 1 }).message).toBe("tool `t`: parameter `city` must be a JSON Schema object, got string");
    expect(invalid({ name: "t", description: "", parameters: { type: "string" }, run: () => 1 }).message).toMatch(/must have `type: object`/);
  });

  it("a missing description", () => {
    expect(invalid({ name: "t", run: () => 1 }).message).toBe("tool `t` needs a `description` (a string)");
  });
});
