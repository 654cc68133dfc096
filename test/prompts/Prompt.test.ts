import { describe, expect, it } from "vitest";
import { ConfigError, ModelBehaviorError } from "../../src/errors.js";
import { isParseError, ParseError, Prompt } from "../../src/prompts/index.js";
import { declaration, tool } from "../../src/tools/index.js";

describe("Prompt templates", () => {
  it("fills {name} placeholders and keeps {{ }} as literal braces", () => {
    const prompt = new Prompt({ path: "bot/ask", prompt: 'Answer {question} as {{"answer": "..."}} for {{literal}}.' });
    expect(prompt.format({ question: "why" })).toBe('Answer why as {"answer": "..."} for {literal}.');
  });

  it("renders a value that is not a string as JSON", () => {
    const prompt = new Prompt({ path: "bot/ask", prompt: "{n} {flag} {list} {obj} {nothing}" });
    expect(prompt.format({ n: 3, flag: false, list: [1, "a"], obj: { a: { b: 2 } }, nothing: null })).toBe('3 false [1,"a"] {"a":{"b":2}} null');
  });

  it("leaves braces that do not open a placeholder as they are, so JSON examples keep working", () => {
    const prompt = new Prompt({ path: "bot/ask", prompt: 'Reply like {"city": "{city}"} or { city } or {0}.' });
    expect(prompt.format({ city: "Paris" })).toBe('Reply like {"city": "Paris"} or { city } or {0}.');
    expect(prompt.placeholders()).toEqual(["city"]);
  });

  it("lists each placeholder once, in order, without the literal ones", () => {
    expect(new Prompt({ path: "p", prompt: "{b} {a} {b} {{c}} {{{d}}}" }).placeholders()).toEqual(["b", "a", "d"]);
    expect(new Prompt({ path: "p", prompt: "{{{d}}}" }).format({ d: "x" })).toBe("{x}");
  });

  it("reports a missing argument with its name, the prompt path and the arguments given", () => {
    const prompt = new Prompt({ path: "weather_bot/convert", prompt: "{question} in {unit}" });
    let error: unknown;
    try {
      prompt.format({ question: "How warm?", extra: 1 });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: "prompt_missing_argument", exitCode: 2 });
    expect((error as Error).message).toBe("prompt `weather_bot/convert` needs the argument `unit`, but the arguments given were: question, extra");
    expect(() => prompt.format()).toThrow("prompt `weather_bot/convert` needs the argument `question`, but no arguments were given");
  });

  it("does not take inherited properties as arguments", () => {
    const prompt = new Prompt({ path: "p", prompt: "{constructor}" });
    expect(() => prompt.format({})).toThrow(/needs the argument `constructor`/);
  });
});

describe("Prompt fields", () => {
  it("defaults agentTools to true and keeps tools and names in order", () => {
    const add = tool({ name: "add", description: "Add", parameters: { a: { type: "number" } }, run: () => 1 });
    const prompt = new Prompt({ path: "p", prompt: "x", functionList: [add, "web_search"] });
    expect(prompt.agentTools).toBe(true);
    expect(prompt.functionNames).toEqual(["add", "web_search"]);
    expect(new Prompt({ path: "p", prompt: "x", agentTools: false }).agentTools).toBe(false);
  });

  it("refuses a functionList entry that is not a tool", () => {
    expect(() => new Prompt({ path: "p", prompt: "x", functionList: [42 as never] })).toThrow("prompt `p`: functionList[0] is neither a tool nor a tool name");
  });

  it("binds a name and a declaration through the resolver, and names a missing tool", () => {
    const impl = tool({ name: "web_search", description: "impl", parameters: { query: { type: "string" } }, run: ({ query }) => `results for ${String(query)}` });
    const decl = declaration({ name: "web_search", description: "Search the web", properties: { query: { type: "string" } }, required: ["query"] });
    const resolve = (name: string) => (name === "web_search" ? impl : undefined);

    const [byName] = new Prompt({ path: "p", prompt: "x", functionList: ["web_search"] }).tools(resolve);
    expect(byName).toBe(impl);
    const [bound] = new Prompt({ path: "p", prompt: "x", functionList: [decl] }).tools(resolve);
    expect(bound?.description).toBe("Search the web");
    expect(bound?.isDeclaration).toBe(false);

    const missing = new Prompt({ path: "research_bot/system", prompt: "x", functionList: ["web_fetch"] });
    expect(() => missing.tools(resolve)).toThrow(expect.objectContaining({ code: "tool_not_found", message: "prompt `research_bot/system` lists the tool `web_fetch`, but no tool with that exact name is registered" }));
    expect(() => missing.tools()).toThrow(/`web_fetch`, but the agent has no tool resolver/);
  });
});

describe("ParseError", () => {
  it("is a ModelBehaviorError recognised across module copies", () => {
    const error = new ParseError("No cells found");
    expect(error).toBeInstanceOf(ModelBehaviorError);
    expect(error.code).toBe("parse_error");
    expect(isParseError(error)).toBe(true);
    const foreign = Object.assign(new Error("x"), { [Symbol.for("lllm.parseError")]: true });
    expect(isParseError(foreign)).toBe(true);
    expect(isParseError(new Error("x"))).toBe(false);
  });
});
