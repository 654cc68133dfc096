import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError } from "../../src/errors.js";
import { FunctionCall, tool, type FunctionTool, type ParametersInput } from "../../src/tools/index.js";

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
const run = (): string => "ok";

function getWeather(parameters: ParametersInput): FunctionTool {
  return tool({ name: "get_weather", description: "Get the current weather for a city", parameters, run });
}

describe("the seed's get_weather schema (Step 1)", () => {
  const expected = fixture("get_weather.tool.json");
  const properties = {
    city: { type: "string", description: "The city name, e.g. 'Paris'" },
    unit: { type: "string", description: "Temperature unit: 'celsius' or 'fahrenheit'", default: "celsius" },
  };

  it("is produced exactly from a properties map, key order included", () => {
    const weather = getWeather(properties);
    expect(weather.toTool()).toEqual(JSON.parse(expected));
    expect(`${JSON.stringify(weather.toTool(), null, 2)}\n`).toBe(expected);
  });

  it("is produced exactly from a whole object schema without `required`", () => {
    expect(`${JSON.stringify(getWeather({ type: "object", properties }).toTool(), null, 2)}\n`).toBe(expected);
  });

  it("is produced exactly from a zod object", () => {
    const parameters = z.object({
      city: z.string().describe("The city name, e.g. 'Paris'"),
      unit: z.string().default("celsius").describe("Temperature unit: 'celsius' or 'fahrenheit'"),
    });
    expect(`${JSON.stringify(getWeather(parameters).toTool(), null, 2)}\n`).toBe(expected);
  });
});

describe("defaults", () => {
  it("creates the description when there is none, with the Python repr of the default", () => {
    const t = tool({ name: "t", description: "", run, parameters: { n: { type: "integer", default: 5 }, flag: { type: "boolean", default: true }, maybe: { type: "string", default: null }, tags: { type: "array", items: { type: "string" }, default: ["a"] } } });
    expect(t.properties).toEqual({
      n: { type: "integer", description: "(default: 5)" },
      flag: { type: "boolean", description: "(default: True)" },
      maybe: { type: "string", description: "(default: None)" },
      tags: { type: "array", items: { type: "string" }, description: "(default: ['a'])" },
    });
    expect(t.required).toEqual([]);
  });

  it("keeps an explicit `required` of a whole object schema", () => {
    const t = tool({ name: "t", description: "", run, parameters: { type: "object", properties: { a: { type: "string", default: "x" }, b: { type: "string" }, c: { type: "string" } }, required: ["a", "b"] } });
    expect(t.required).toEqual(["a", "b"]);
    expect(t.properties.a).toEqual({ type: "string", description: "(default: 'x')" });
  });

  it("treats zod's optional fields as not required", () => {
    const t = tool({ name: "t", description: "", run, parameters: z.object({ a: z.string().optional(), b: z.string() }) });
    expect(t.required).toEqual(["b"]);
    expect(tool({ name: "t", description: "", run, parameters: z.object({ a: z.string().optional() }) }).required).toEqual([]);
  });
});

describe("the seed's draw example: enums, arrays, nested models", () => {
  const pointSchema = { type: "object", title: "Point", properties: { x: { type: "number" }, y: { type: "number" } }, required: ["x", "y"] };
  const variants: Record<string, ParametersInput> = {
    zod: z.object({ points: z.array(z.object({ x: z.number(), y: z.number() })), color: z.enum(["red", "blue"]) }),
    "JSON Schema with $defs (Pydantic's shape)": {
      type: "object",
      properties: { points: { type: "array", items: { $ref: "#/$defs/Point" } }, color: { enum: ["red", "blue"], type: "string" } },
      required: ["points", "color"],
      $defs: { Point: pointSchema },
    },
    "a properties map": { points: { type: "array", items: pointSchema }, color: { enum: ["red", "blue"], type: "string" } },
  };

  for (const [form, parameters] of Object.entries(variants)) {
    it(`from ${form}`, () => {
      const draw = tool({ name: "draw", description: "Draw a line through the points", parameters, run });
      expect(draw.properties.color).toEqual({ enum: ["red", "blue"], type: "string" });
      expect(draw.properties.points?.type).toBe("array");
      expect((draw.properties.points?.items as { required: string[] }).required).toEqual(["x", "y"]);
      expect(draw.strict).toBe(false);
      expect(draw.required).toEqual(["points", "color"]);
      expect(JSON.stringify(draw.toTool())).not.toMatch(/\$ref|\$defs|\$schema/);
    });
  }
});

describe("recursive models are inlined once", () => {
  const childrenBackRef = (title?: string) => ({ type: "array", items: title ? { type: "object", title } : { type: "object" } });

  it("from JSON Schema $defs: the back reference becomes {type: object, title: Node}", () => {
    const t = tool({
      name: "tree",
      description: "Walk a tree",
      run,
      parameters: {
        type: "object",
        properties: { root: { $ref: "#/$defs/Node", description: "The root" } },
        required: ["root"],
        $defs: { Node: { type: "object", title: "Node", properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/Node" } } }, required: ["name", "children"] } },
      },
    });
    expect(t.properties.root).toEqual({ type: "object", title: "Node", properties: { name: { type: "string" }, children: childrenBackRef("Node") }, required: ["name", "children"], description: "The root" });
  });

  it("from `definitions` too, titled by the definition's name", () => {
    const t = tool({ name: "tree", description: "", run, parameters: { type: "object", properties: { root: { $ref: "#/definitions/Node" } }, definitions: { Node: { type: "object", properties: { kids: { type: "array", items: { $ref: "#/definitions/Node" } } } } } } });
    expect(t.properties.root).toEqual({ type: "object", properties: { kids: childrenBackRef("Node") } });
  });

  it("from a zod getter with an id", () => {
    const Node = z.object({ name: z.string(), get children() { return z.array(Node); } }).meta({ id: "Node" });
    const t = tool({ name: "tree", description: "", run, parameters: z.object({ root: Node }) });
    expect(t.properties.root).toEqual({ type: "object", properties: { name: { type: "string" }, children: childrenBackRef("Node") }, required: ["name", "children"] });
  });

  it("from an unnamed z.lazy, without zod's generated name", () => {
    type Tree = { name: string; children: Tree[] };
    const Node: z.ZodType<Tree> = z.lazy(() => z.object({ name: z.string(), children: z.array(Node) }));
    const t = tool({ name: "tree", description: "", run, parameters: z.object({ root: Node }) });
    expect(t.properties.root).toEqual({ type: "object", properties: { name: { type: "string" }, children: childrenBackRef() }, required: ["name", "children"] });
  });

  it("from a zod getter titled with .meta({title}): the back reference keeps the title", () => {
    // A JavaScript value has no name (unlike a Pydantic class): the schema's title or id is what the model sees.
    const Node = z.object({ name: z.string(), get children() { return z.array(Node); } }).meta({ title: "Node" });
    const t = tool({ name: "tree", description: "", run, parameters: z.object({ root: Node }) });
    expect((t.properties.root as { properties: { children: unknown } }).properties.children).toEqual(childrenBackRef("Node"));
  });

  it("a non-recursive definition used twice is inlined at both places", () => {
    const t = tool({ name: "line", description: "", run, parameters: { type: "object", properties: { from: { $ref: "#/$defs/P" }, to: { $ref: "#/$defs/P" } }, $defs: { P: { type: "object", properties: { x: { type: "number" } } } } } });
    expect(t.properties.from).toEqual({ type: "object", properties: { x: { type: "number" } } });
    expect(t.properties.to).toEqual(t.properties.from);
  });

  it("a ref to a missing definition is a tool_invalid error naming it", () => {
    expect(() => tool({ name: "t", description: "", run, parameters: { type: "object", properties: { a: { $ref: "#/$defs/Missing" } } } })).toThrow(/cannot resolve `\$ref: #\/\$defs\/Missing`/);
  });
});

describe("parameters with no type (Step 1: unannotated parameters become strings)", () => {
  it("a properties map entry without a type is a string, and keeps its description", () => {
    const t = tool({ name: "t", description: "", run, parameters: { query: { description: "What to look for" }, limit: { type: "integer" } } });
    expect(t.toTool().function.parameters.properties).toEqual({ query: { type: "string", description: "What to look for" }, limit: { type: "integer" } });
    expect(t.strict).toBe(true);
  });

  it("in a whole object schema too, with its default noted; enums, unions and refs keep their own types", () => {
    const t = tool({ name: "t", description: "", run, parameters: { type: "object", properties: { q: {}, mode: { default: "fast" }, color: { enum: [1, 2] }, either: { anyOf: [{ type: "integer" }, { type: "null" }] } } } });
    expect(t.properties).toEqual({ q: { type: "string" }, mode: { type: "string", description: "(default: 'fast')" }, color: { enum: [1, 2] }, either: { anyOf: [{ type: "integer" }, { type: "null" }] } });
  });

  it("an untyped parameter accepts a string and refuses a number, as the model is told", async () => {
    const t = tool({ name: "t", description: "", run: ({ q }) => `got ${String(q)}`, parameters: { q: {} } });
    expect((await t.call(new FunctionCall({ name: "t", arguments: { q: "x" } }))).result).toBe("got x");
    expect((await t.call(new FunctionCall({ name: "t", arguments: { q: 3 } }))).error).toMatch(/Invalid arguments for t/);
  });
});

describe("optional-nullable parameters", () => {
  const nullableInteger = { anyOf: [{ type: "integer" }, { type: "null" }] };

  it("a type list becomes anyOf with null", () => {
    const t = tool({ name: "t", description: "", run, parameters: { limit: { type: ["integer", "null"], description: "Max rows" } } });
    expect(t.properties.limit).toEqual({ ...nullableInteger, description: "Max rows" });
    expect(t.strict).toBe(false);
  });

  it("zod's nullable is the same anyOf, without zod's safe-integer bounds", () => {
    const t = tool({ name: "t", description: "", run, parameters: z.object({ limit: z.number().int().nullable() }) });
    expect(t.properties.limit).toEqual(nullableInteger);
  });

  it("bounds the author chose stay", () => {
    const t = tool({ name: "t", description: "", run, parameters: z.object({ n: z.number().int().min(1) }) });
    expect(t.properties.n).toEqual({ type: "integer", minimum: 1 });
  });
});

describe("the strict decision", () => {
  const strictOf = (parameters: unknown, strict?: boolean): boolean =>
    tool({ name: "t", description: "", run, parameters: parameters as Record<string, unknown>, ...(strict === undefined ? {} : { strict }) }).strict;

  it("is on when every parameter is required and flat", () => {
    expect(strictOf({ a: { type: "string" }, b: { type: "number" }, c: { type: "integer" }, d: { type: "boolean" }, e: { enum: [1, 2] }, f: { type: "array", items: { type: "string" } }, g: { type: "array", items: { enum: ["x"] } } })).toBe(true);
    expect(strictOf(undefined)).toBe(true);
    expect(strictOf(z.object({ a: z.string(), b: z.array(z.number()), c: z.enum(["x", "y"]) }))).toBe(true);
  });

  it("is off for an optional parameter, an object, a nested array or an anyOf", () => {
    expect(strictOf({ a: { type: "string", default: "x" } })).toBe(false);
    expect(strictOf({ a: { type: "object", properties: {} } })).toBe(false);
    expect(strictOf({ a: { type: "array", items: { type: "array", items: { type: "string" } } } })).toBe(false);
    expect(strictOf({ a: { anyOf: [{ type: "string" }, { type: "null" }] } })).toBe(false);
    expect(strictOf(z.object({ a: z.record(z.string(), z.number()) }))).toBe(false);
  });

  it("an explicit strict wins", () => {
    expect(strictOf({ a: { type: "string", default: "x" } }, true)).toBe(true);
    expect(strictOf({ a: { type: "string" } }, false)).toBe(false);
  });
});

describe("zod schemas from another copy of zod", () => {
  it("are recognised by their internals and converted", () => {
    // zod's CommonJS build is a separate module instance: the same situation as a tool file with its own zod.
    const { z: otherZod } = createRequire(import.meta.url)("zod") as { z: typeof z };
    expect(otherZod).not.toBe(z);
    const t = tool({ name: "t", description: "", run, parameters: otherZod.object({ city: otherZod.string().describe("City"), days: otherZod.number().default(1) }) });
    expect(t.properties).toEqual({ city: { type: "string", description: "City" }, days: { type: "number", description: "(default: 1)" } });
    expect(t.required).toEqual(["city"]);
  });

  it("a zod type that JSON Schema cannot express is a tool_invalid error", () => {
    const attempt = () => tool({ name: "when", description: "", run, parameters: z.object({ at: z.date() }) });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/tool `when`: its zod parameters cannot be turned into JSON Schema/);
  });

  it("a zod schema that is not an object is refused", () => {
    expect(() => tool({ name: "t", description: "", run, parameters: z.string() as never })).toThrow(/must be an object schema/);
  });
});
