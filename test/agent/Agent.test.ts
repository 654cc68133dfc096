import { BudgetError } from "../../src/errors.js";
import { describe, expect, it } from "vitest";
import { Agent, Dialog, REPEATED_CALL_TEXT, ROUND_LIMIT_TEXT, UnknownToolError, type AgentEvent } from "../../src/agent/index.js";
import { ConfigError, ModelBehaviorError } from "../../src/errors.js";
import type { Model, ModelRequest, ModelResponse, ToolCallRequest } from "../../src/providers/Model.js";
import { ParseError, Prompt } from "../../src/prompts/index.js";
import { declaration, tool, type FunctionTool } from "../../src/tools/index.js";
import { waitUntil } from "../helpers/waitUntil.js";

/** One scripted model turn: text, tool calls (arguments as an object, or raw text sent as-is), or both. */
interface Turn {
  text?: string;
  calls?: Array<{ name: string; arguments?: unknown; id?: string }>;
  usage?: { promptTokens: number; completionTokens: number };
}

/** A queue of scripted turns that records every request; an unexpected call fails the test. */
class FakeModel implements Model {
  readonly name = "fake";
  readonly requests: ModelRequest[] = [];
  #turns: Turn[];
  #next = 0;

  constructor(turns: Turn[]) {
    this.#turns = turns;
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const turn = this.#turns.shift();
    if (!turn) throw new Error(`unexpected model call #${this.requests.length}`);
    const toolCalls: ToolCallRequest[] = (turn.calls ?? []).map((call) => ({
      id: call.id ?? `call_${this.#next++}`,
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
    }));
    if (turn.text !== undefined) request.onText?.(turn.text);
    return { message: { role: "assistant", content: turn.text ?? null }, toolCalls, usage: turn.usage ?? { promptTokens: 10, completionTokens: 2 } };
  }

  /** The names of the tools offered on request `index`, or undefined when the request had no `tools`. */
  toolNames(index: number): string[] | undefined {
    return this.requests[index]?.tools?.map((entry) => entry.function.name);
  }

  /** The last message of request `index`. */
  lastMessage(index: number): unknown {
    return this.requests[index]?.messages.at(-1);
  }
}

function counted<T extends Record<string, unknown>>(spec: { name: string; run: (args: T) => unknown; description?: string; parameters?: Record<string, unknown> }): FunctionTool & { runs: T[] } {
  const runs: T[] = [];
  const made = tool<T>({ name: spec.name, description: spec.description ?? spec.name, parameters: spec.parameters ?? {}, run: (args) => (runs.push(args), spec.run(args)) });
  return Object.assign(made, { runs });
}

const getWeather = () =>
  counted<{ city: string; unit: string }>({
    name: "get_weather",
    description: "Get the current weather for a city",
    parameters: { city: { type: "string" }, unit: { type: "string", default: "celsius" } },
    run: ({ city, unit }) => `Sunny, 22 degrees ${unit} in ${city}`,
  });

const toFahrenheit = () => counted<{ celsius: number }>({ name: "to_fahrenheit", parameters: { celsius: { type: "number" } }, run: ({ celsius }) => (celsius * 9) / 5 + 32 });

function weatherAgent(model: Model, options: Partial<ConstructorParameters<typeof Agent>[0]> = {}) {
  const weather = getWeather();
  const agent = new Agent({
    name: "weather_bot",
    systemPrompt: new Prompt({ path: "weather_bot/system", prompt: "You are a weather assistant.", functionList: [weather] }),
    model,
    maxInterruptSteps: 3,
    ...options,
  });
  agent.open("chat");
  return { agent, weather };
}

describe("the tool loop of seed Step 4", () => {
  it("leaves the seed's dialog: two get_weather calls in one round, then the answer", async () => {
    const model = new FakeModel([
      { calls: [{ name: "get_weather", arguments: { city: "Paris" } }, { name: "get_weather", arguments: { city: "Tokyo" } }] },
      { text: "Sunny in both." },
    ]);
    const { agent, weather } = weatherAgent(model);
    agent.receive("What is the weather in Paris and Tokyo?");
    const response = await agent.respond();

    expect(response).toMatchObject({ role: "assistant", name: "weather_bot", content: "Sunny in both." });
    expect(agent.currentDialog.messages.map((message) => `${message.role} | ${message.name}`)).toEqual([
      "system | system",
      "user | user",
      "tool_call | weather_bot",
      "tool | get_weather",
      "tool | get_weather",
      "assistant | weather_bot",
    ]);
    expect(weather.runs).toEqual([
      { city: "Paris", unit: "celsius" },
      { city: "Tokyo", unit: "celsius" },
    ]);
    expect(model.requests[0]?.tools).toEqual([weather.toTool()]);
    // The second request carries the call and both results, answered by call id, in call order.
    expect(model.requests[1]?.messages.slice(2)).toEqual([
      { role: "assistant", content: null, toolCalls: [
        { id: "call_0", name: "get_weather", arguments: '{"city":"Paris"}' },
        { id: "call_1", name: "get_weather", arguments: '{"city":"Tokyo"}' },
      ] },
      { role: "tool", toolCallId: "call_0", name: "get_weather", content: "Return of calling function get_weather with arguments {'city': 'Paris'}:\n---\nSunny, 22 degrees celsius in Paris\n---" },
      { role: "tool", toolCallId: "call_1", name: "get_weather", content: "Return of calling function get_weather with arguments {'city': 'Tokyo'}:\n---\nSunny, 22 degrees celsius in Tokyo\n---" },
    ]);
  });

  it("formats the system prompt with promptArgs when the dialog opens", () => {
    const agent = new Agent({ name: "writer", systemPrompt: "You write briefs about {topic}.", model: new FakeModel([]) });
    agent.open("draft", { promptArgs: { topic: "tides" } });
    expect(agent.currentDialog.messages).toEqual([{ role: "system", name: "system", content: "You write briefs about tides." }]);
    expect(agent.currentDialog.name).toBe("draft");
    expect(() => agent.open("again")).toThrow(expect.objectContaining({ code: "prompt_missing_argument" }));
  });

  it("asks for open() before receive()", () => {
    const agent = new Agent({ name: "a", systemPrompt: "x", model: new FakeModel([]) });
    expect(() => agent.receive("hi")).toThrow(expect.objectContaining({ code: "dialog_not_open" }));
  });
});

describe("which tools are offered (seed Step 3)", () => {
  it("offers the system prompt's tools after a plain receive(), and a turn prompt adds its own for that turn only", async () => {
    const model = new FakeModel([{ text: "a" }, { text: "b" }, { text: "c" }]);
    const { agent } = weatherAgent(model);
    agent.receive("Hi");
    await agent.respond();
    const convert = new Prompt({ path: "weather_bot/convert", prompt: "{question}", functionList: [toFahrenheit()] });
    agent.receivePrompt(convert, { question: "How warm is Paris in Fahrenheit?" });
    await agent.respond();
    agent.receive("Thanks");
    await agent.respond();

    expect(model.toolNames(0)).toEqual(["get_weather"]);
    expect(model.toolNames(1)).toEqual(["get_weather", "to_fahrenheit"]);
    expect(model.lastMessage(1)).toEqual({ role: "user", content: "How warm is Paris in Fahrenheit?" });
    expect(model.toolNames(2)).toEqual(["get_weather"]);
  });

  it("lets the turn's version of a tool win a name clash", async () => {
    const model = new FakeModel([{ calls: [{ name: "get_weather", arguments: { city: "Oslo" } }] }, { text: "done" }]);
    const { agent, weather } = weatherAgent(model);
    const rainy = counted<{ city: string }>({ name: "get_weather", description: "Rainy weather", parameters: { city: { type: "string" } }, run: ({ city }) => `Rain in ${city}` });
    agent.receivePrompt(new Prompt({ path: "weather_bot/rainy", prompt: "Weather in Oslo?", functionList: [rainy] }));
    await agent.respond();

    expect(model.requests[0]?.tools?.map((entry) => entry.function.description)).toEqual(["Rainy weather"]);
    expect(rainy.runs).toHaveLength(1);
    expect(weather.runs).toHaveLength(0);
  });

  it("offers only the turn's tools with agentTools: false, and none when it has none", async () => {
    const model = new FakeModel([{ text: "a" }, { text: "b" }]);
    const { agent } = weatherAgent(model);
    agent.receivePrompt(new Prompt({ path: "only", prompt: "Convert 20C", functionList: [toFahrenheit()], agentTools: false }));
    await agent.respond();
    agent.receivePrompt(new Prompt({ path: "weather_bot/recap", prompt: "Summarize our conversation in one sentence.", agentTools: false }));
    await agent.respond();

    expect(model.toolNames(0)).toEqual(["to_fahrenheit"]);
    expect(model.requests[1]).not.toHaveProperty("tools");
  });

  it("binds a tool named by a string through resolveTool, and names a missing one before calling the model", async () => {
    const search = counted<{ query: string }>({ name: "web_search", parameters: { query: { type: "string" } }, run: ({ query }) => `Top results for ${query}` });
    const model = new FakeModel([{ calls: [{ name: "web_search", arguments: { query: "LLLM" } }] }, { text: "found" }]);
    const decl = declaration({ name: "web_fetch", description: "Fetch a page", properties: { url: { type: "string" } }, required: ["url"] });
    const registry = new Map<string, FunctionTool>([["web_search", search]]);
    const agent = new Agent({
      name: "researcher",
      systemPrompt: new Prompt({ path: "research_bot/system", prompt: "You research.", functionList: ["web_search"] }),
      model,
      resolveTool: (name) => registry.get(name),
    });
    agent.open("main");
    agent.receive("What is LLLM?");
    expect((await agent.respond()).content).toBe("found");
    expect(search.runs).toEqual([{ query: "LLLM" }]);

    agent.receivePrompt(new Prompt({ path: "research_bot/fetch", prompt: "Fetch it.", functionList: [decl] }));
    const failure = agent.respond();
    await expect(failure).rejects.toBeInstanceOf(ConfigError);
    await expect(failure).rejects.toMatchObject({ code: "tool_not_found", message: expect.stringContaining("`web_fetch`") });
    expect(model.requests).toHaveLength(2);
  });
});

describe("controlling the loop (seed Step 5)", () => {
  it("caps the rounds, appends the limit text, and calls the model once more without tools", async () => {
    const model = new FakeModel([
      { calls: [{ name: "get_weather", arguments: { city: "A" } }] },
      { calls: [{ name: "get_weather", arguments: { city: "B" } }] },
      { text: "Final." },
    ]);
    const { agent } = weatherAgent(model, { maxInterruptSteps: 2 });
    agent.receive("Weather everywhere?");
    const response = await agent.respond();

    expect(response.content).toBe("Final.");
    expect(model.requests).toHaveLength(3);
    expect(model.toolNames(1)).toEqual(["get_weather"]);
    expect(model.requests[2]).not.toHaveProperty("tools");
    expect(model.lastMessage(2)).toEqual({ role: "user", content: "You are reaching the limit of tool calls. Provide the final response." });
    expect(ROUND_LIMIT_TEXT).toBe("You are reaching the limit of tool calls. Provide the final response.");
  });

  it("a tool call after the cap means the round budget ran out (a BudgetError, exit 3)", async () => {
    const model = new FakeModel([{ calls: [{ name: "get_weather", arguments: { city: "A" } }] }, { calls: [{ name: "get_weather", arguments: { city: "B" } }] }]);
    const { agent, weather } = weatherAgent(model, { maxInterruptSteps: 1 });
    agent.receive("Weather?");
    const error = await agent.respond().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BudgetError);
    expect((error as BudgetError).exitCode).toBe(3);
    expect((error as Error).message).toBe("agent `weather_bot` still called `get_weather` after its limit of 1 tool-call round was reached");
    expect(weather.runs).toHaveLength(1);
  });

  it("allows 100 rounds for maxInterruptSteps 0 and warns once", async () => {
    const rounds = (count: number): Turn[] => Array.from({ length: count }, (_, index) => ({ calls: [{ name: "get_weather", arguments: { city: `c${index}` } }] }));
    const model = new FakeModel([...rounds(100), { text: "At last." }, { text: "Again." }]);
    const events: AgentEvent[] = [];
    const { agent, weather } = weatherAgent(model, { maxInterruptSteps: 0, onEvent: (event) => events.push(event) });
    agent.receive("Go");
    expect((await agent.respond()).content).toBe("At last.");
    agent.receive("Once more");
    await agent.respond();

    expect(weather.runs).toHaveLength(100);
    expect(model.toolNames(99)).toEqual(["get_weather"]);
    expect(model.requests[100]).not.toHaveProperty("tools");
    expect(model.lastMessage(100)).toEqual({ role: "user", content: ROUND_LIMIT_TEXT });
    const warnings = events.filter((event) => event.type === "warning");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ agent: "weather_bot", message: expect.stringContaining("up to 100 rounds") });
  });

  it("sends a tool's error to the model as Error: <message>", async () => {
    const divide = tool<{ a: number; b: number }>({
      name: "divide",
      description: "Divide two numbers",
      parameters: { a: { type: "number" }, b: { type: "number" } },
      run: ({ a, b }) => {
        if (b === 0) throw new Error("Division by zero");
        return String(a / b);
      },
    });
    const model = new FakeModel([{ calls: [{ name: "divide", arguments: { a: 1, b: 0 } }] }, { text: "Cannot divide by zero." }]);
    const agent = new Agent({ name: "calc", systemPrompt: new Prompt({ path: "calc/system", prompt: "Calculate.", functionList: [divide] }), model });
    agent.open("main");
    agent.receive("1/0?");
    await agent.respond();
    expect(model.lastMessage(1)).toMatchObject({ role: "tool", name: "divide", content: "Error: Division by zero" });
  });

  it("does not run a repeated call again, in a later round or the same one, and says so exactly", async () => {
    const model = new FakeModel([
      { calls: [{ name: "get_weather", arguments: { city: "Paris", unit: "celsius" } }] },
      {
        calls: [
          { name: "get_weather", arguments: { unit: "celsius", city: "Paris" } },
          { name: "get_weather", arguments: { city: "Rome" } },
          { name: "get_weather", arguments: { city: "Rome" } },
        ],
      },
      { text: "done" },
    ]);
    const events: AgentEvent[] = [];
    const { agent, weather } = weatherAgent(model, { onEvent: (event) => events.push(event) });
    agent.receive("Weather?");
    const session = await agent.respond({ returnSession: true });

    expect(weather.runs).toEqual([
      { city: "Paris", unit: "celsius" },
      { city: "Rome", unit: "celsius" },
    ]);
    const results = model.requests[2]?.messages.filter((message) => message.role === "tool").map((message) => message.content);
    const paris = "Return of calling function get_weather with arguments {'city': 'Paris', 'unit': 'celsius'}:\n---\nSunny, 22 degrees celsius in Paris\n---";
    const rome = "Return of calling function get_weather with arguments {'city': 'Rome'}:\n---\nSunny, 22 degrees celsius in Rome\n---";
    expect(results).toEqual([
      paris,
      `This call was already made with the same arguments in this response; use the earlier result:\n${paris}`,
      rome,
      `${REPEATED_CALL_TEXT}\n${rome}`,
    ]);
    expect(session.calls).toHaveLength(4);
    expect(events.filter((event) => event.type === "tool_call").map((event) => event.type === "tool_call" && event.repeated)).toEqual([false, true, false, true]);
  });

  it("runs a repeated call again in a later respond()", async () => {
    const same = { calls: [{ name: "get_weather", arguments: { city: "Paris" } }] };
    const model = new FakeModel([same, { text: "a" }, same, { text: "b" }]);
    const { agent, weather } = weatherAgent(model);
    agent.receive("Paris?");
    await agent.respond();
    agent.receive("Paris again?");
    await agent.respond();
    expect(weather.runs).toHaveLength(2);
  });

  it("ends the run on a tool that is not offered, naming it and the offered tools", async () => {
    const model = new FakeModel([{ calls: [{ name: "get_wether", arguments: { city: "Paris" } }] }]);
    const { agent } = weatherAgent(model);
    agent.receive("Weather?");
    const error: unknown = await agent.respond().catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ModelBehaviorError);
    expect(error).toBeInstanceOf(UnknownToolError);
    expect(error).toMatchObject({ code: "unknown_tool", toolName: "get_wether", offeredTools: ["get_weather"] });
    expect((error as Error).message).toBe("agent `weather_bot` called the tool `get_wether`, which is not offered on this turn; the tools offered were: get_weather (did you mean `get_weather`?)");
    // Nothing half-done is left in the dialog: a call without results would break the next request.
    expect(agent.currentDialog.messages.map((message) => message.role)).toEqual(["system", "user"]);
  });

  it("says no tools were offered when a tool-less turn gets a call", async () => {
    const model = new FakeModel([{ calls: [{ name: "get_weather", arguments: {} }] }]);
    const { agent } = weatherAgent(model);
    agent.receivePrompt(new Prompt({ path: "recap", prompt: "Recap.", agentTools: false }));
    await expect(agent.respond()).rejects.toMatchObject({ code: "unknown_tool", offeredTools: [], message: expect.stringContaining("no tools were offered on this turn") });
  });

  it("returns malformed or non-object arguments to the model, and takes empty arguments as {}", async () => {
    const ping = counted<Record<string, never>>({ name: "ping", run: () => "pong" });
    const model = new FakeModel([
      {
        calls: [
          { name: "get_weather", arguments: '{"city": "Paris"' },
          { name: "get_weather", arguments: '["Paris"]' },
          { name: "ping", arguments: "" },
        ],
      },
      { text: "ok" },
    ]);
    const { agent, weather } = weatherAgent(model);
    agent.receivePrompt(new Prompt({ path: "p", prompt: "Go", functionList: [ping] }));
    const session = await agent.respond({ returnSession: true });

    const results = model.requests[1]?.messages.filter((message) => message.role === "tool").map((message) => message.content) ?? [];
    expect(results[0]).toMatch(/^Error: the arguments of get_weather are not valid JSON \(.+\)\. Send a JSON object\.$/);
    expect(results[1]).toBe("Error: the arguments of get_weather are not valid JSON (expected an object, got array). Send a JSON object.");
    expect(results[2]).toBe("Return of calling function ping with arguments {}:\n---\npong\n---");
    expect(weather.runs).toHaveLength(0);
    expect(ping.runs).toEqual([{}]);
    expect(session.calls.map((call) => call.error === undefined)).toEqual([false, false, true]);
  });

  it("runs the calls of one round concurrently and reports them in call order", async () => {
    let inFlight = 0;
    let most = 0;
    const releases: Array<() => void> = [];
    const slow = (name: string) =>
      tool({
        name,
        description: name,
        run: async () => {
          inFlight += 1;
          most = Math.max(most, inFlight);
          await new Promise<void>((resolve) => releases.push(resolve));
          inFlight -= 1;
          return `${name} done`;
        },
      });
    const model = new FakeModel([{ calls: [{ name: "first", arguments: {} }, { name: "second", arguments: {} }] }, { text: "both" }]);
    const agent = new Agent({ name: "a", systemPrompt: new Prompt({ path: "a/system", prompt: "x", functionList: [slow("first"), slow("second")] }), model });
    agent.open("main");
    agent.receive("go");
    const pending = agent.respond();
    expect(await waitUntil(() => releases.length === 2)).toBe(true);
    // Finish the second call first: the results must still follow the order of the calls.
    releases[1]?.();
    expect(await waitUntil(() => inFlight === 1)).toBe(true);
    releases[0]?.();
    await pending;

    expect(most).toBe(2);
    expect(agent.currentDialog.messages.filter((message) => message.role === "tool").map((message) => message.name)).toEqual(["first", "second"]);
  });

  it("passes the signal to the model and the tools, and streams text through onText", async () => {
    let toolSignal: AbortSignal | undefined;
    const probe = tool({ name: "probe", description: "p", run: (_args, context) => ((toolSignal = context.signal), "ok") });
    const model = new FakeModel([{ calls: [{ name: "probe", arguments: {} }] }, { text: "streamed answer" }]);
    const agent = new Agent({ name: "a", systemPrompt: new Prompt({ path: "a/system", prompt: "x", functionList: [probe] }), model, toolContext: { cwd: "/tmp" } });
    agent.open("main");
    agent.receive("go");
    const controller = new AbortController();
    const deltas: string[] = [];
    await agent.respond({ signal: controller.signal, onText: (delta) => deltas.push(delta) });

    expect(model.requests.every((request) => request.signal === controller.signal && typeof request.onText === "function")).toBe(true);
    expect(toolSignal).toBe(controller.signal);
    expect(deltas).toEqual(["streamed answer"]);
  });

  it("stops before calling the model when the signal is already aborted", async () => {
    const model = new FakeModel([]);
    const { agent } = weatherAgent(model);
    agent.receive("go");
    const controller = new AbortController();
    controller.abort();
    await expect(agent.respond({ signal: controller.signal })).rejects.toMatchObject({ code: "interrupted", exitCode: 130 });
    expect(model.requests).toHaveLength(0);
  });
});

describe("parsing replies", () => {
  const cells = (content: string) => {
    const found = [...content.matchAll(/<python_cell>(.*?)<\/python_cell>/gs)].map((match) => match[1]?.trim());
    if (found.length === 0) throw new ParseError("No cells found. Wrap code in <python_cell>...</python_cell>");
    return found;
  };

  it("sends Error: <message>. Please fix. back and keeps the retry out of the dialog", async () => {
    const model = new FakeModel([{ text: "I will compute it." }, { text: "<python_cell>print(1)</python_cell>" }]);
    const events: AgentEvent[] = [];
    const agent = new Agent({ name: "analyst", systemPrompt: "You analyse.", model, onEvent: (event) => events.push(event) });
    agent.open("main");
    agent.receivePrompt(new Prompt({ path: "notebook/task", prompt: "{task}", parser: cells }), { task: "Add numbers" });
    const message = await agent.respond();

    expect(message.parsed).toEqual(["print(1)"]);
    expect(model.requests[1]?.messages.slice(-2)).toEqual([
      { role: "assistant", content: "I will compute it." },
      { role: "user", content: "Error: No cells found. Wrap code in <python_cell>...</python_cell>. Please fix." },
    ]);
    expect(agent.currentDialog.messages.map((entry) => entry.content)).toEqual(["You analyse.", "Add numbers", "<python_cell>print(1)</python_cell>"]);
    expect(events.filter((event) => event.type === "parse_retry")).toHaveLength(1);
  });

  it("gives up after maxExceptionRetry retries with the last message", async () => {
    const model = new FakeModel([{ text: "no" }, { text: "still no" }, { text: "nope" }]);
    const agent = new Agent({ name: "analyst", systemPrompt: "You analyse.", model, maxExceptionRetry: 2 });
    agent.open("main");
    agent.receivePrompt(new Prompt({ path: "notebook/task", prompt: "go", parser: (content) => { throw new ParseError(`bad reply "${content}"`); } }));
    const error: unknown = await agent.respond().catch((caught: unknown) => caught);

    expect(model.requests).toHaveLength(3);
    expect(error).toBeInstanceOf(ModelBehaviorError);
    expect(error).toMatchObject({ code: "parse_failed", message: 'agent `analyst`: the reply to prompt `notebook/task` still did not parse after 2 retries: bad reply "nope"' });
  });

  it("lets an error that is not a ParseError through without retrying", async () => {
    const model = new FakeModel([{ text: "x" }]);
    const agent = new Agent({ name: "a", systemPrompt: "s", model });
    agent.open("main");
    agent.receivePrompt(new Prompt({ path: "p", prompt: "go", parser: () => { throw new TypeError("parser bug"); } }));
    await expect(agent.respond()).rejects.toThrow("parser bug");
    expect(model.requests).toHaveLength(1);
  });

  it("passes a responseFormat through and parses the reply as JSON, retrying invalid JSON", async () => {
    const model = new FakeModel([{ text: "{oops" }, { text: '```json\n{"city": "Paris", "temp": 22}\n```' }]);
    const format = { type: "json_object" } as const;
    const agent = new Agent({ name: "a", systemPrompt: "s", model, responseFormat: format });
    agent.open("main");
    agent.receive("JSON please");
    const message = await agent.respond();

    expect(message.parsed).toEqual({ city: "Paris", temp: 22 });
    expect(model.requests.every((request) => request.responseFormat === format)).toBe(true);
    expect(model.lastMessage(1)).toMatchObject({ role: "user", content: expect.stringMatching(/^Error: your reply is not valid JSON \(.+\); reply with the JSON value only\. Please fix\.$/) });
  });

  it("applies a turn prompt's parser only to its own turn", async () => {
    const model = new FakeModel([{ text: "<python_cell>1</python_cell>" }, { text: "plain" }]);
    const agent = new Agent({ name: "a", systemPrompt: "s", model });
    agent.open("main");
    agent.receivePrompt(new Prompt({ path: "p", prompt: "go", parser: cells }));
    expect((await agent.respond()).parsed).toEqual(["1"]);
    agent.receive("thanks");
    expect(await agent.respond()).not.toHaveProperty("parsed");
  });
});

describe("sessions", () => {
  it("returns the rounds by step, every call, summed usage and the final message", async () => {
    const model = new FakeModel([
      { calls: [{ name: "get_weather", arguments: { city: "Berlin" } }, { name: "get_weather", arguments: { city: "Bonn" } }], usage: { promptTokens: 100, completionTokens: 20 } },
      { calls: [{ name: "get_weather", arguments: { city: "Köln" } }], usage: { promptTokens: 150, completionTokens: 10 } },
      { text: "Cloudy.", usage: { promptTokens: 200, completionTokens: 5 } },
    ]);
    const { agent } = weatherAgent(model);
    agent.receive("And in Berlin?");
    const session = await agent.respond({ returnSession: true });

    expect(session.message).toBe(agent.currentDialog.messages.at(-1));
    expect(session.message.content).toBe("Cloudy.");
    const steps = [...session.interrupts].map(([step, rounds]) => [step, rounds.map((calls) => calls.map((call) => [call.name, call.arguments]))]);
    expect(steps).toEqual([
      [0, [[["get_weather", { city: "Berlin" }], ["get_weather", { city: "Bonn" }]]]],
      [1, [[["get_weather", { city: "Köln" }]]]],
    ]);
    expect(session.calls.map((call) => call.arguments.city)).toEqual(["Berlin", "Bonn", "Köln"]);
    expect(session.usage).toEqual({ promptTokens: 450, completionTokens: 35, llmCalls: 3 });
    expect(session.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("reports model calls, replies and tool calls as events", async () => {
    const model = new FakeModel([{ calls: [{ name: "get_weather", arguments: { city: "Paris" } }] }, { text: "Sunny." }]);
    const events: AgentEvent[] = [];
    const { agent } = weatherAgent(model, { onEvent: (event) => events.push(event) });
    agent.receive("Paris?");
    await agent.respond();
    expect(events.map((event) => event.type)).toEqual(["model_call", "model_reply", "tool_call", "model_call", "model_reply"]);
    expect(events[0]).toMatchObject({ type: "model_call", agent: "weather_bot", round: 0, messages: 2, tools: ["get_weather"], model: model.name });
    // The run store keeps what was sent: the messages themselves travel with the event.
    expect((events[0] as Extract<AgentEvent, { type: "model_call" }>).sent?.map((message) => message.role)).toEqual(["system", "user"]);
    expect(events[4]).toMatchObject({ type: "model_reply", round: 1, text: "Sunny.", toolCalls: [] });
  });
});

describe("Dialog", () => {
  it("maps its messages to the model format", () => {
    const dialog = new Dialog("chat");
    dialog.add({ role: "system", name: "system", content: "s" });
    dialog.add({ role: "tool_call", name: "bot", content: "Let me check.", toolCalls: [{ id: "c1", name: "t", arguments: "{}" }] });
    dialog.add({ role: "tool", name: "t", content: "r", toolCallId: "c1" });
    dialog.add({ role: "assistant", name: "bot", content: "done", parsed: { x: 1 } });
    expect(dialog.toModelMessages()).toEqual([
      { role: "system", content: "s" },
      { role: "assistant", content: "Let me check.", toolCalls: [{ id: "c1", name: "t", arguments: "{}" }] },
      { role: "tool", content: "r", toolCallId: "c1", name: "t" },
      { role: "assistant", content: "done" },
    ]);
  });
});

describe("Agent.with", () => {
  it("copies every setting and replaces only what is given, with no dialog", async () => {
    const model = new FakeModel([{ text: "ok" }]);
    const { agent } = weatherAgent(model, { maxInterruptSteps: 2 });
    const copy = agent.with({ systemPrompt: "You are terse." });
    expect(copy).not.toBe(agent);
    expect([copy.name, copy.model, copy.maxInterruptSteps, copy.maxExceptionRetry, copy.resolveTool]).toEqual([agent.name, agent.model, 2, agent.maxExceptionRetry, agent.resolveTool]);
    expect(copy.systemPrompt.prompt).toBe("You are terse.");
    expect(() => copy.currentDialog).toThrow();
  });
});
