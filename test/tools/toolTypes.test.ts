import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { tool, type ToolRunContext } from "../../src/index.js";

/** Compile-time checks (`npm run typecheck` fails when they do not hold): how `tool()` types `run`'s arguments. */

describe("tool(): the arguments of run", () => {
  it("are inferred from zod parameters", () => {
    tool({
      name: "get_weather",
      description: "Weather of a city",
      parameters: z.object({ city: z.string(), days: z.number().default(1), unit: z.enum(["c", "f"]).optional() }),
      run: (args, context) => {
        expectTypeOf(args.city).toEqualTypeOf<string>();
        expectTypeOf(args.days).toEqualTypeOf<number>();
        expectTypeOf(args.unit).toEqualTypeOf<"c" | "f" | undefined>();
        expectTypeOf(context).toEqualTypeOf<ToolRunContext>();
        // Every capability is there (FunctionTool.call fills in the local ones): no `?.` needed.
        expectTypeOf(context.progress).toBeFunction();
        expectTypeOf(context.sample).returns.resolves.toHaveProperty("text");
        // @ts-expect-error: not a parameter of the schema
        void args.country;
        return args.city;
      },
    });
  });

  it("destructure with their types", () => {
    tool({ name: "t", description: "", parameters: z.object({ city: z.string() }), run: ({ city }) => expectTypeOf(city).toEqualTypeOf<string>() });
  });

  it("stay loose with JSON Schema parameters", () => {
    tool({
      name: "t",
      description: "",
      parameters: { city: { type: "string" } },
      run: (args) => {
        expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>();
      },
    });
  });

  it("take an explicit type with JSON Schema parameters", () => {
    tool<{ city: string }>({ name: "t", description: "", parameters: { city: { type: "string" } }, run: ({ city }) => expectTypeOf(city).toEqualTypeOf<string>() });
  });
});
