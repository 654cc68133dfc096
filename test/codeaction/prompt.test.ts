import { describe, expect, it } from "vitest";
import { extractProgram, programPrompt, pythonSignature } from "../../src/codeaction/index.js";
import { tool } from "../../src/tools/index.js";

/** Seed 002: "Prose-string tools still work — the model is told to parse them". */
const PROSE_RULE = "A function that returns prose (a str of text rather than data) must be parsed by your program: extract the fields and numbers you need in code (string methods, re), never by reading the text yourself.";
const weather = tool({
  name: "get_weather",
  description: "Get the current weather for a city",
  parameters: {
    unit: { type: "string", description: "Temperature unit", default: "celsius" },
    city: { type: "string", description: "The city name" },
    days: { type: ["integer", "null"], description: "Days ahead" },
  },
  run: () => "",
});

describe("pythonSignature", () => {
  it("puts required parameters first, shows defaults, and documents each parameter", () => {
    expect(pythonSignature(weather)).toBe(`def get_weather(city: str, days: int | None, unit: str = 'celsius'):
    """Get the current weather for a city

    city: The city name
    days: Days ahead
    unit: Temperature unit (default: 'celsius')
    """`);
  });

  it("maps schemas to Python types, and keeps builtins' names for tools.<name>", () => {
    const odd = tool({
      name: "list",
      description: "Lists things",
      parameters: { kind: { type: "string", enum: ["a", "b"] }, tags: { type: "array", items: { type: "string" } }, extra: { type: "object", default: {} } },
      run: () => [],
    });
    expect(pythonSignature(odd).split("\n")[0]).toBe("def tools.list(kind: Literal['a', 'b'], tags: list[str], extra: dict = {}):");
    const dashed = tool({ name: "fetch-page", description: "Fetch", run: () => "" });
    expect(pythonSignature(dashed)).toBe('def fetch_page():\n    """Fetch"""');
  });
});

describe("programPrompt", () => {
  it("lists the functions and seed 002's rules, and never a number for the cap", () => {
    const prompt = programPrompt([weather]);
    expect(prompt).toContain("def get_weather(city: str");
    expect(prompt).toContain("Results are plain Python values");
    // Seed 002: prose-string tools still work, "the model is told to parse them".
    expect(prompt).toContain(PROSE_RULE);
    expect(prompt).toContain("Use all the data the question needs: never skip, sample or truncate records, never count your own calls, and never stop early.");
    expect(prompt).toContain("Each program has a cap on function calls. If a call goes past it, the call raises ToolBudgetExceeded: do not catch it, let it raise.");
    expect(prompt).not.toMatch(/cap[^.]*\d/);
  });
});

describe("extractProgram", () => {
  it("takes the python blocks, else plain blocks, else the whole reply", () => {
    expect(extractProgram("Plan:\n```python\nx = 1\n```\nthen\n```py\nprint(x)\n```")).toBe("x = 1\n\nprint(x)");
    expect(extractProgram("```json\n{}\n```\n```\nprint(2)\n```")).toBe("print(2)");
    expect(extractProgram("print(3)")).toBe("print(3)");
    expect(extractProgram("```python\nprint(4)")).toBe("print(4)"); // a reply cut before the closing fence
    expect(extractProgram("  ")).toBeUndefined();
  });
});
