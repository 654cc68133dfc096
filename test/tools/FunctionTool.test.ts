import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ConfigError, ToolError } from "../../src/errors.js";
import { declaration, FunctionCall, FunctionTool, tool, toolResult } from "../../src/tools/index.js";
import { toolFailureOf } from "../../src/tools/toolFailure.js";

const getWeather = tool<{ city: string; unit: string }>({
  name: "get_weather",
  description: "Get the current weather for a city",
  parameters: {
    city: { type: "string", description: "The city name, e.g. 'Paris'" },
    unit: { type: "string", description: "Temperature unit: 'celsius' or 'fahrenheit'", default: "celsius" },
  },
  run: ({ city, unit }) => `Sunny, 22 degrees ${unit} in ${city}`,
});

const divide = tool<{ a: number; b: number }>({
  name: "divide",
  description: "Divide two numbers",
  parameters: { a: { type: "number" }, b: { type: "number" } },
  run: ({ a, b }) => {
    if (b === 0) throw new Error("Division by zero");
    return String(a / b);
  },
});

describe("calling a tool (Step 2)", () => {
  it("gives the seed's result text, with defaults applied but not written back into the call", async () => {
    const call = await getWeather.call(new FunctionCall({ name: "get_weather", arguments: { city: "Paris" } }));
    expect(call.result).toBe("Sunny, 22 degrees celsius in Paris");
    expect(call.resultStr).toBe(readFileSync(new URL("./fixtures/get_weather.result.txt", import.meta.url), "utf8").trimEnd());
    expect(call.arguments).toEqual({ city: "Paris" });
    expect(call.error).toBeUndefined();
  });

  it("renders a non-string result as JSON", async () => {
    const forecast = tool({ name: "forecast", description: "", parameters: { days: { type: "integer" } }, run: ({ days }) => ({ days, temps: [18, 19.5], windy: false }) });
    const call = await forecast.call(new FunctionCall({ name: "forecast", arguments: { days: 2 } }));
    expect(call.result).toEqual({ days: 2, temps: [18, 19.5], windy: false });
    expect(call.resultStr).toBe("Return of calling function forecast with arguments {'days': 2}:\n---\n{\"days\":2,\"temps\":[18,19.5],\"windy\":false}\n---");
  });

  it("runs async tools and passes the context", async () => {
    const controller = new AbortController();
    const seen: unknown[] = [];
    const slow = tool({ name: "slow", description: "", run: async (_args, context) => { seen.push(context.signal, context.cwd); await sleep(5); return "done"; } });
    const call = await slow.call(new FunctionCall({ name: "slow" }), { signal: controller.signal, cwd: "/tmp" });
    expect(call.result).toBe("done");
    expect(seen).toEqual([controller.signal, "/tmp"]);
    expect(call.resultStr).toBe("Return of calling function slow with arguments {}:\n---\ndone\n---");
  });

  it("gives each call an id unless the provider's is given", () => {
    const first = new FunctionCall({ name: "x" });
    expect(first.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(new FunctionCall({ name: "x" }).id).not.toBe(first.id);
    expect(new FunctionCall({ id: "call_abc", name: "x" }).id).toBe("call_abc");
  });
});

describe("tool errors become text for the model (Step 5)", () => {
  it("divide by zero gives exactly `Error: Division by zero`", async () => {
    const call = await divide.call(new FunctionCall({ name: "divide", arguments: { a: 1, b: 0 } }));
    expect(call.resultStr).toBe("Error: Division by zero");
    expect(call.error).toBe("Division by zero");
    expect(call.result).toBeUndefined();
  });

  it("an async tool that rejects, or throws a non-Error, is reported the same way", async () => {
    const rejecting = tool({ name: "r", description: "", run: async () => { await sleep(1); throw new TypeError("no network"); } });
    expect((await rejecting.call(new FunctionCall({ name: "r" }))).resultStr).toBe("Error: no network");
    const throwingText = tool({ name: "s", description: "", run: () => { throw "plain text"; } });
    expect((await throwingText.call(new FunctionCall({ name: "s" }))).resultStr).toBe("Error: plain text");
  });

  it("a tool with a timeout that does not finish in time fails with a message for the model; its signal is aborted", async () => {
    let aborted: unknown;
    const slow = tool({
      name: "slow",
      description: "",
      timeout: 0.05,
      run: (_args, context) =>
        new Promise(() => {
          context.signal?.addEventListener("abort", () => (aborted = context.signal?.reason));
        }),
    });
    const call = await slow.call(new FunctionCall({ name: "slow" }));
    expect(call.resultStr).toBe("Error: tool slow did not finish within 0.05 s");
    expect(aborted).toMatchObject({ code: "tool_timeout" });
    const fast = tool({ name: "fast", description: "", timeout: 5, run: () => "done" });
    expect((await fast.call(new FunctionCall({ name: "fast" }))).result).toBe("done");
    expect(() => tool({ name: "bad", description: "", timeout: 0, run: () => 1 })).toThrow(/`timeout` must be a number of seconds above 0, got 0/);
  });

  it("what a tool threw is kept for --verbose (file:line), apart from what the model reads", async () => {
    const file = import.meta.filename;
    const throwing = tool({ name: "t", description: "", source: { file }, run: () => { throw new Error("bad input"); } });
    const call = await throwing.call(new FunctionCall({ name: "t" }));
    expect(call.resultStr).toBe("Error: bad input");
    expect(toolFailureOf(call)?.location).toMatchObject({ file });
    expect(JSON.stringify(call)).not.toContain("stack");
  });

  it("a call object reused after a success no longer shows the old result", async () => {
    const call = await divide.call(new FunctionCall({ name: "divide", arguments: { a: 4, b: 2 } }));
    expect(call.result).toBe("2");
    call.arguments = { a: 1, b: 0 };
    await divide.call(call);
    expect(call.result).toBeUndefined();
    expect(call.resultStr).toBe("Error: Division by zero");
  });
});

describe("invalid arguments never reach run", () => {
  const draw = vi.fn(({ points, color }: { points: unknown[]; color: string }) => `Drew ${points.length} points in ${color}`);
  const drawTool = tool({ name: "draw", description: "Draw a line through the points", parameters: z.object({ points: z.array(z.object({ x: z.number(), y: z.number() })), color: z.enum(["red", "blue"]) }), run: draw });
  const weatherRun = vi.fn(() => "sunny");
  const weather = tool({ name: "get_weather", description: "", parameters: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"], default: "celsius" } }, run: weatherRun });
  const divideRun = vi.fn(divide.run!);
  const spiedDivide = new FunctionTool({ ...divide, run: divideRun });

  const cases: Array<[string, FunctionTool, Record<string, unknown>, string]> = [
    ["a missing required argument", spiedDivide, { a: 1 }, "Error: Invalid arguments for divide: missing required argument 'b' (number)"],
    ["a wrong type", spiedDivide, { a: 1, b: "0" }, `Error: Invalid arguments for divide: argument 'b' must be number, got string "0"`],
    ["an enum miss", drawTool, { points: [], color: "green" }, `Error: Invalid arguments for draw: argument 'color' must be one of "red", "blue", got string "green"`],
    ["a wrong nested field", drawTool, { points: [{ x: 1 }], color: "red" }, "Error: Invalid arguments for draw: 'points[0]' is missing required field 'y' (number)"],
    ["an unknown argument", weather, { city: "Paris", town: "Lyon" }, "Error: Invalid arguments for get_weather: unknown argument 'town'; allowed arguments: 'city', 'unit'"],
    ["a misspelt argument", weather, { cty: "Paris" }, "Error: Invalid arguments for get_weather: missing required argument 'city' (string); unknown argument 'cty' (did you mean 'city'?); allowed arguments: 'city', 'unit'"],
    ["arguments that are not an object", weather, ["Paris"] as never, "Error: Invalid arguments for get_weather: arguments must be an object of named arguments, got array"],
  ];
  for (const [what, target, args, expected] of cases) {
    it(what, async () => {
      const call = await target.call(new FunctionCall({ name: target.name, arguments: args }));
      expect(call.resultStr).toBe(expected);
      expect(call.error).toBe(expected.slice("Error: ".length));
      expect(call.arguments).toEqual(args);
      expect(draw).not.toHaveBeenCalled();
      expect(weatherRun).not.toHaveBeenCalled();
      expect(divideRun).not.toHaveBeenCalled();
    });
  }

  it("a nullable argument explains both choices", async () => {
    const limited = tool({ name: "rows", description: "", parameters: { limit: { type: ["integer", "null"] } }, run: () => "ok" });
    expect((await limited.call(new FunctionCall({ name: "rows", arguments: { limit: "ten" } }))).resultStr).toBe(`Error: Invalid arguments for rows: argument 'limit' must be integer or null, got string "ten"`);
    expect((await limited.call(new FunctionCall({ name: "rows", arguments: { limit: null } }))).result).toBe("ok");
  });

  it("a tool without parameters accepts no arguments at all", async () => {
    const now = tool({ name: "now", description: "", run: () => "noon" });
    expect((await now.call(new FunctionCall({ name: "now" }))).result).toBe("noon");
    expect((await now.call(new FunctionCall({ name: "now", arguments: { tz: "UTC" } }))).resultStr).toBe("Error: Invalid arguments for now: unknown argument 'tz'; this tool takes no arguments");
  });
});

describe("result processors (Step 6)", () => {
  it("replace the whole result text", async () => {
    const weatherBrief = tool<{ city: string }>({
      name: "weather_brief",
      description: "Get the current weather for a city",
      parameters: { city: { type: "string" } },
      run: ({ city }) => `Sunny in ${city}`,
      processor: (result, call) => `[${call.name}] ${String(result)}`,
    });
    const call = await weatherBrief.call(new FunctionCall({ name: "weather_brief", arguments: { city: "Paris" } }));
    expect(call.resultStr).toBe("[weather_brief] Sunny in Paris");
    expect(call.result).toBe("Sunny in Paris");
  });

  it("a processor that throws is reported as an error, keeping the result", async () => {
    const broken = tool({ name: "broken", description: "", run: () => 42, processor: () => { throw new Error("bad format"); } });
    const call = await broken.call(new FunctionCall({ name: "broken" }));
    expect(call.resultStr).toBe("Error: the result processor of broken failed: bad format");
    expect(call.result).toBe(42);
  });
});

describe("declarations and bind() (Step 7)", () => {
  const searchDeclaration = declaration({
    name: "web_search",
    description: "Search the web for information",
    properties: { query: { type: "string", description: "Search query" } },
    required: ["query"],
  });

  it("a declaration has the schema but no implementation", async () => {
    expect(searchDeclaration.isDeclaration).toBe(true);
    expect(searchDeclaration.toTool()).toEqual({
      type: "function",
      function: { name: "web_search", description: "Search the web for information", parameters: { type: "object", properties: { query: { type: "string", description: "Search query" } }, required: ["query"], additionalProperties: false }, strict: true },
    });
    const attempt = searchDeclaration.call(new FunctionCall({ name: "web_search", arguments: { query: "lllm" } }));
    await expect(attempt).rejects.toBeInstanceOf(ToolError);
    await expect(attempt).rejects.toMatchObject({ code: "tool_not_bound", message: expect.stringMatching(/`web_search`.*register an implementation with the exact name `web_search`/) });
  });

  it("binding keeps the declaration's interface and uses the implementation's run", async () => {
    const implementation = tool<{ query: string }>({
      name: "web_search",
      description: "implementation's own description",
      parameters: { query: { type: "string" }, limit: { type: "integer", default: 3 } },
      run: ({ query }) => `Top results for '${query}'`,
      processor: (result) => `processed: ${String(result)}`,
    });
    const bound = searchDeclaration.bind(implementation);
    expect(bound.isDeclaration).toBe(false);
    expect(searchDeclaration.isDeclaration).toBe(true);
    expect(bound.toTool()).toEqual(searchDeclaration.toTool());
    expect((await bound.call(new FunctionCall({ name: "web_search", arguments: { query: "lllm" } }))).resultStr).toBe("processed: Top results for 'lllm'");
    // The declaration does not offer `limit`, so the model may not send it.
    expect((await bound.call(new FunctionCall({ name: "web_search", arguments: { query: "lllm", limit: 1 } }))).resultStr).toMatch(/^Error: Invalid arguments for web_search: unknown argument 'limit'/);
  });

  it("the declaration's processor wins over the implementation's", async () => {
    const withProcessor = new FunctionTool({ ...searchDeclaration, processor: () => "declared format" });
    const bound = withProcessor.bind(tool({ name: "web_search", description: "", parameters: { query: { type: "string" } }, run: () => "x", processor: () => "implementation format" }));
    expect((await bound.call(new FunctionCall({ name: "web_search", arguments: { query: "q" } }))).resultStr).toBe("declared format");
  });

  it("an optional parameter gets the implementation's default when the declaration has none", async () => {
    const weatherDeclaration = declaration({ name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string" } }, required: ["city"] } });
    const seen = vi.fn((args: Record<string, unknown>) => `${String(args.unit)}`);
    const bound = weatherDeclaration.bind(tool({ name: "get_weather", description: "", parameters: { city: { type: "string" }, unit: { type: "string", default: "celsius" } }, run: seen }));
    expect((await bound.call(new FunctionCall({ name: "get_weather", arguments: { city: "Paris" } }))).result).toBe("celsius");
    expect(bound.toTool()).toEqual(weatherDeclaration.toTool());
  });

  it("binding to another declaration is a configuration error", () => {
    expect(() => searchDeclaration.bind(searchDeclaration)).toThrow(ConfigError);
    expect(() => searchDeclaration.bind(searchDeclaration)).toThrow(/that is a declaration too/);
  });
});

describe("typing run's arguments", () => {
  it("accepts zod's inferred type and interfaces", async () => {
    const schema = z.object({ city: z.string(), days: z.number().default(1) });
    interface Query { city: string; days: number }
    const typed = tool<z.infer<typeof schema>>({ name: "typed", description: "", parameters: schema, run: ({ city, days }) => `${city} for ${days} day(s)` });
    const viaInterface = tool<Query>({ name: "typed", description: "", parameters: schema, run: ({ city, days }) => `${city}/${days}` });
    expect((await typed.call(new FunctionCall({ name: "typed", arguments: { city: "Oslo" } }))).result).toBe("Oslo for 1 day(s)");
    expect((await viaInterface.call(new FunctionCall({ name: "typed", arguments: { city: "Oslo", days: 2 } }))).result).toBe("Oslo/2");
  });
});

describe("outputSchema", () => {
  const stats = (run: () => unknown, outputSchema: Record<string, unknown> = { type: "object", properties: { high: { type: "number" } }, required: ["high"] }): FunctionTool =>
    tool({ name: "weather_stats", description: "Highs and lows", parameters: {}, outputSchema, run, source: { file: "/pkg/tools/stats.ts" } } as Parameters<typeof tool>[0]);

  it("refuses a schema that does not compile before the tool runs (no side effect), as a tool_invalid ConfigError naming the file", async () => {
    const run = vi.fn(() => ({ high: 20 }));
    const broken = stats(run, { type: "object", properties: { high: { type: "no-such-type" } } });
    const error = await broken.call(new FunctionCall({ name: "weather_stats", arguments: {} })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: "tool_invalid", location: { file: "/pkg/tools/stats.ts" } });
    expect((error as Error).message).toContain("weather_stats`: its outputSchema is not a valid JSON Schema");
    expect(run).not.toHaveBeenCalled();
  });

  it("fails a call that returns no data, with a message that says what to return; an error result stays an error", async () => {
    const text = await stats(() => "20 degrees").call(new FunctionCall({ name: "weather_stats", arguments: {} }));
    expect(text.error).toContain("weather_stats declares an outputSchema but returned no data");
    expect(text.error).toContain("(got string)");
    const richText = await stats(() => toolResult({ content: [{ type: "text", text: "20" }] })).call(new FunctionCall({ name: "weather_stats", arguments: {} }));
    expect(richText.error).toContain("a toolResult without structuredContent");
    const failed = await stats(() => toolResult({ content: [{ type: "text", text: "no station" }], isError: true })).call(new FunctionCall({ name: "weather_stats", arguments: {} }));
    expect(failed.error).toBe("no station");
    const fits = await stats(() => ({ high: 20 })).call(new FunctionCall({ name: "weather_stats", arguments: {} }));
    expect(fits.error).toBeUndefined();
    expect(fits.result).toEqual({ high: 20 });
    const misfit = await stats(() => toolResult({ structuredContent: { high: "warm" } })).call(new FunctionCall({ name: "weather_stats", arguments: {} }));
    expect(misfit.error).toContain("does not match its outputSchema: /high must be number");
  });
});

describe("ctx.log outside MCP", () => {
  it("fails the call on an unknown level, with the message an MCP client's call gets, and writes nothing", async () => {
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      const chatty = tool({ name: "chatty", description: "Logs", parameters: {}, run: (_args, ctx) => (ctx.log("verbose" as never, "hello"), "done") });
      const call = await chatty.call(new FunctionCall({ name: "chatty", arguments: {} }));
      expect(call.error).toBe('ctx.log: unknown level "verbose"; the levels are debug, info, notice, warning, error, critical, alert, emergency');
      const fine = await tool({ name: "fine", description: "Logs", parameters: {}, run: (_args, ctx) => (ctx.log("notice", "hello"), "done") }).call(new FunctionCall({ name: "fine", arguments: {} }));
      expect(fine.result).toBe("done");
      expect(write.mock.calls.map(([text]) => String(text))).toEqual(["notice: hello\n"]);
    } finally {
      write.mockRestore();
    }
  });
});
