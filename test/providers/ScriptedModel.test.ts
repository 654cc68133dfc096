import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, ProviderError } from "../../src/errors.js";
import type { ModelMessage } from "../../src/providers/index.js";
import { ScriptedModel } from "../../src/testing/index.js";

const folder = mkdtempSync(join(tmpdir(), "lllm-script-"));
function scriptFile(name: string, text: string): string {
  const file = join(folder, name);
  writeFileSync(file, text);
  return file;
}

function loadError(file: string): ConfigError {
  try {
    ScriptedModel.fromFile(file);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`expected ${file} to be rejected`);
}

describe("ScriptedModel", () => {
  it("replays turns in order, records each request as it was at call time, and passes assertComplete", async () => {
    const model = new ScriptedModel([
      { tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }, { name: "broken", arguments: "{not json" }] },
      { text: "Sunny.", usage: { prompt_tokens: 7, completion_tokens: 2 } },
    ]);
    const messages: ModelMessage[] = [{ role: "user", content: "Weather?" }];
    const first = await model.generate({ messages });
    expect(first.toolCalls).toEqual([
      { id: "call_1_0", name: "get_weather", arguments: '{"city":"Paris"}' },
      { id: "call_1_1", name: "broken", arguments: "{not json" },
    ]);
    expect(first.message.content).toBeNull();
    expect(first.finishReason).toBe("tool_calls");
    messages.push({ role: "assistant", content: null, toolCalls: first.toolCalls }, { role: "tool", content: "Sunny", toolCallId: "call_1_0" });
    const second = await model.generate({ messages });
    expect(second.message.content).toBe("Sunny.");
    expect(second.usage).toEqual({ promptTokens: 7, completionTokens: 2 });
    expect(model.requests.map((request) => request.messages.length)).toEqual([1, 3]);
    expect(model.remaining).toBe(0);
    expect(() => model.assertComplete()).not.toThrow();
  });

  it("goes on after the answers a resumed run took from its record (adopt): the next turn, numbered on", async () => {
    const turns = [1, 2, 3].map((n) => ({ tool_calls: [{ name: "note", arguments: { n } }] }));
    const model = new ScriptedModel([...turns, "done"]);
    const recorded = { message: { role: "assistant" as const, content: "" }, toolCalls: [], usage: { promptTokens: 0, completionTokens: 0 } };
    model.adopt(recorded, "worker");
    model.adopt(recorded, "worker");
    const third = await model.generate({ messages: [{ role: "user", content: "go" }], agent: "worker" });
    expect(third.toolCalls).toEqual([{ id: "call_3_0", name: "note", arguments: JSON.stringify({ n: 3 }) }]);
    expect((await model.generate({ messages: [{ role: "user", content: "go" }] })).message.content).toBe("done");
    expect(() => model.assertComplete()).not.toThrow();
    // Answers of another model (an agent on another script) are not this script's turns.
    const other = new ScriptedModel(["w1", "w2"], { name: "scripted:w.yaml" });
    other.adopt({ ...recorded, model: "scripted:j.yaml" }, "judge");
    other.adopt({ ...recorded, model: "scripted:w.yaml" }, "writer");
    expect((await other.generate({ messages: [], agent: "writer" })).message.content).toBe("w2");
    // A script by agent goes on in the list of the agent each answer was for.
    const byAgent = new ScriptedModel({ agents: { a: ["a1", "a2"], b: ["b1", "b2"] } });
    byAgent.adopt(recorded, "a");
    expect((await byAgent.generate({ messages: [], agent: "a" })).message.content).toBe("a2");
    expect((await byAgent.generate({ messages: [], agent: "b" })).message.content).toBe("b1");
  });

  it("throws a clear error on a call with no turn left", async () => {
    const model = new ScriptedModel(["only"]);
    await model.generate({ messages: [] });
    await expect(model.generate({ messages: [] })).rejects.toThrow(/ScriptedModel: no scripted turn left for call #2; the script has 1 turn$/);
    await expect(model.generate({ messages: [] })).rejects.toBeInstanceOf(ProviderError);
  });

  it("refuses a turn with neither text nor tool calls, as a live model's empty answer fails the run; a cut or filtered one is the loop's", async () => {
    const model = new ScriptedModel(["", { text: "  " }, { text: "", finish_reason: "length" }]);
    await expect(model.generate({ messages: [] })).rejects.toMatchObject({ code: "provider_script_empty_turn", message: expect.stringContaining("scripted turn 1 has no text and no tool calls") });
    const again = new ScriptedModel([{ text: "" }]);
    await expect(again.generate({ messages: [] })).rejects.toBeInstanceOf(ProviderError);
    // White space is text, as the Anthropic and Gemini answers recorded from a live run may hold it.
    await expect(new ScriptedModel([{ text: "  " }]).generate({ messages: [] })).resolves.toMatchObject({ message: { content: "  " } });
    const cut = new ScriptedModel([{ text: "", finish_reason: "length" }]);
    await expect(cut.generate({ messages: [] })).resolves.toMatchObject({ finishReason: "length" });
  });

  it("assertComplete fails when turns were never used", async () => {
    const model = new ScriptedModel(["one", "two", "three"]);
    await model.generate({ messages: [] });
    expect(() => model.assertComplete()).toThrow("2 of 3 scripted turns were never used (the run made 1 call)");
    const single = new ScriptedModel(["only"]);
    expect(() => single.assertComplete()).toThrow("1 of 1 scripted turn was never used (the run made 0 calls)");
  });

  it("streams text through onText in a few chunks", async () => {
    const model = new ScriptedModel(["The weather in Paris is sunny."]);
    const pieces: string[] = [];
    await model.generate({ messages: [], onText: (piece) => pieces.push(piece) });
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe("The weather in Paris is sunny.");
  });

  it("reports an estimated usage when a turn gives none", async () => {
    const response = await new ScriptedModel(["12345678"]).generate({ messages: [{ role: "user", content: "hi" }] });
    expect(response.usage.promptTokens).toBeGreaterThan(0);
    expect(response.usage.completionTokens).toBe(2);
  });

  it("rejects invalid turns given in code", () => {
    expect(() => new ScriptedModel([{ tool_calls: [{ arguments: {} }] } as never])).toThrow(ConfigError);
  });
});

describe("ScriptedModel.fromFile", () => {
  it("loads a YAML list of turns and a JSON {turns: [...]}", async () => {
    const yaml = ScriptedModel.fromFile(scriptFile("list.yaml", "- Hello.\n- tool_calls:\n    - name: get_weather\n      arguments: {city: Paris}\n"));
    expect(yaml.remaining).toBe(2);
    const json = ScriptedModel.fromFile(scriptFile("wrapped.json", JSON.stringify({ turns: ["Hi"] })));
    expect((await json.generate({ messages: [] })).message.content).toBe("Hi");
  });

  it("names a missing file", () => {
    const error = loadError(join(folder, "missing.yaml"));
    expect(error.message).toContain("missing.yaml");
    expect(error.message).toContain("not found");
  });

  it("points at the line of a YAML syntax error", () => {
    const file = scriptFile("broken.yaml", "- Hello\n- text: [unclosed\n");
    const error = loadError(file);
    expect(error.code).toBe("config_invalid_script");
    expect(error.problems[0]!.location?.file).toBe(file);
    expect(error.problems[0]!.location?.line).toBeGreaterThanOrEqual(2);
  });

  it("lists every wrong turn with its path and line", () => {
    const file = scriptFile("wrong.yaml", "turns:\n  - Hello\n  - tool_calls:\n      - arguments: {city: Paris}\n  - txt: typo\n");
    const error = loadError(file);
    expect(error.problems.map((problem) => problem.message)).toEqual([
      "turns[1].tool_calls[0].name: a tool call needs a name (a non-empty string)",
      "turns[2].txt: unknown key `txt`; a turn has text, tool_calls, usage, finish_reason, request, added, offered, model",
    ]);
    expect(error.problems.map((problem) => problem.location?.line)).toEqual([4, 5]);
    expect(error.message).toContain(`${file}:4`);
  });

  it("says what is expected for an empty file or a mapping without turns", () => {
    expect(loadError(scriptFile("empty.yaml", "")).message).toContain("model script is empty");
    expect(loadError(scriptFile("noturns.yaml", "steps: []\n")).message).toContain("no `turns` or `agents` key (found `steps`)");
  });

  it("loads a script by agent, and points at a wrong turn of an agent's list", async () => {
    const model = ScriptedModel.fromFile(scriptFile("agents.yaml", "run: X\nagents:\n  a: [Hi from a]\n  b: [Hi from b]\n"));
    expect((await model.generate({ messages: [], agent: "b" })).message.content).toBe("Hi from b");
    const file = scriptFile("agents-wrong.yaml", "agents:\n  a:\n    - Hi\n    - request: [{role: robot, content: x}]\n");
    const error = loadError(file);
    expect(error.problems.map((problem) => problem.message)).toEqual(["agents.a[1].request[0].role: role must be one of system, user, assistant, tool, got string \"robot\""]);
    expect(error.problems[0]!.location?.line).toBe(4);
    expect(loadError(scriptFile("both.yaml", "turns: []\nagents: {}\n")).message).toContain("`turns` (one list for every agent) or `agents` (a list per agent), not both");
  });
});

const system = (content: string): ModelMessage => ({ role: "system", content });
const user = (content: string): ModelMessage => ({ role: "user", content });
const tools = (...names: string[]) => names.map((name) => ({ type: "function" as const, function: { name, description: name, parameters: {} } }));

/** A recorded dialog of agent `bot`: asks `stamp`, then answers; the tool said `v1:<word>`. */
function recordedBot(word: string) {
  return [
    {
      request: [{ role: "system" as const, content: "You stamp." }, { role: "user" as const, content: `stamp ${word}` }],
      offered: ["stamp"],
      tool_calls: [{ id: `call_${word}`, name: "stamp", arguments: { word }, result: `v1:${word}` }],
    },
    { text: `Stamped ${word}.` },
  ];
}

/** Drive one dialog of `bot` as the loop would: the tool answers `tool(word)`. */
async function runBot(model: ScriptedModel, word: string, tool: (word: string) => string = (value) => `v1:${value}`): Promise<string | null> {
  const messages: ModelMessage[] = [system("You stamp."), user(`stamp ${word}`)];
  const first = await model.generate({ messages: [...messages], tools: tools("stamp"), agent: "bot" });
  messages.push({ role: "assistant", content: null, toolCalls: first.toolCalls });
  for (const call of first.toolCalls) messages.push({ role: "tool", content: tool(word), toolCallId: call.id, name: call.name });
  return (await model.generate({ messages, tools: tools("stamp"), agent: "bot" })).message.content;
}

describe("ScriptedModel by agent, with recorded requests", () => {
  it("answers each agent from its own turns, whatever the order across agents", async () => {
    const model = new ScriptedModel({ agents: { writer: ["writer 1", "writer 2"], summarizer: ["summary 1"] } });
    expect((await model.generate({ messages: [], agent: "summarizer" })).message.content).toBe("summary 1");
    expect((await model.generate({ messages: [], agent: "writer" })).message.content).toBe("writer 1");
    expect((await model.generate({ messages: [], agent: "writer" })).message.content).toBe("writer 2");
    expect(() => model.assertComplete()).not.toThrow();
    const missing = await model.generate({ messages: [], agent: "editor" }).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(ProviderError);
    expect(missing).toMatchObject({ code: "provider_script_no_agent", message: "the script has no turns for agent `editor`; it has turns for `writer`, `summarizer`" });
  });

  it("answers a nested tactic's agent (`brief/writer`) from its own list, else from a list under its plain name (scripts written before)", async () => {
    const model = new ScriptedModel({ agents: { "brief/writer": ["nested 1"], writer: ["plain 1"], "outer/inner/editor": ["deep 1"], editor: ["editor 1"] } });
    expect((await model.generate({ messages: [], agent: "brief/writer" })).message.content).toBe("nested 1");
    expect((await model.generate({ messages: [], agent: "other/writer" })).message.content).toBe("plain 1");
    expect((await model.generate({ messages: [], agent: "outer/inner/editor" })).message.content).toBe("deep 1");
    expect((await model.generate({ messages: [], agent: "x/inner/editor" })).message.content).toBe("editor 1");
  });

  it("gives two dialogs of one agent that run at once their own recorded turns, by what they send", async () => {
    const model = new ScriptedModel({ agents: { bot: [...recordedBot("alpha"), ...recordedBot("beta")] } });
    // beta starts first and the two interleave: each still gets the turns recorded for its own request.
    const [beta, alpha] = await Promise.all([runBot(model, "beta"), runBot(model, "alpha")]);
    expect([alpha, beta]).toEqual(["Stamped alpha.", "Stamped beta."]);
    expect(model.remaining).toBe(0);
  });

  it("fails with a diff of the request that changed, naming the agent, its turn and the tool call", async () => {
    const model = new ScriptedModel({ agents: { bot: recordedBot("alpha") } }, { rerecordHint: "Run `lllm test --update`." });
    const error = (await runBot(model, "alpha", (word) => `v2:${word}`).catch((caught: unknown) => caught)) as ProviderError;
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.code).toBe("provider_replay_diverged");
    expect(error.message).toBe(
      [
        "the replay diverged at agent `bot`'s turn 2 of 2: the model would now be sent something the recording did not ask it:",
        '    message 4 (the result of stamp({"word":"alpha"})) differs:',
        '    - recorded: "v1:alpha"',
        '    + now:      "v2:alpha"',
      ].join("\n"),
    );
    expect(error.hint).toBe("Run `lllm test --update`.");
    // The replay is off the recording: every later call fails with the same cause.
    await expect(model.generate({ messages: [], agent: "bot" })).rejects.toBe(error);
  });

  it("shows a changed prompt and a changed tool list", async () => {
    const prompt = new ScriptedModel({ agents: { bot: recordedBot("alpha") } });
    const changed = await prompt.generate({ messages: [system("You stamp."), user("stamp gamma")], tools: tools("stamp"), agent: "bot" }).catch((error: unknown) => error as Error);
    expect(changed.message).toContain("agent `bot`'s turn 1 of 2");
    expect(changed.message).toContain('message 2 (user) differs:\n    - recorded: "stamp alpha"\n    + now:      "stamp gamma"');
    const offered = new ScriptedModel({ agents: { bot: recordedBot("alpha") } });
    const more = await offered.generate({ messages: [system("You stamp."), user("stamp alpha")], tools: tools("stamp", "erase"), agent: "bot" }).catch((error: unknown) => error as Error);
    expect(more.message).toContain("the tools offered differ: recorded [stamp], now [stamp, erase]\n    + erase");
  });

  it("shows a long multi-line text as the lines that changed", async () => {
    const lines = Array.from({ length: 30 }, (_, index) => `line ${index + 1}`);
    const model = new ScriptedModel({ agents: { bot: [{ request: [{ role: "system", content: "S" }, { role: "user", content: lines.join("\n") }], text: "ok" }] } });
    const changed = lines.map((line) => (line === "line 17" ? "line seventeen" : line));
    const error = await model.generate({ messages: [system("S"), user(changed.join("\n"))], agent: "bot" }).catch((caught: unknown) => caught as Error);
    expect(error.message).toContain("message 2 (user) differs:\n      line 16\n    - line 17\n    + line seventeen\n      line 18");
    expect(error.message).not.toContain("line 3\n");
  });

  it("says which agent called the model once more than recorded", async () => {
    const model = new ScriptedModel({ agents: { bot: recordedBot("alpha") } });
    await runBot(model, "alpha");
    const error = await model.generate({ messages: [system("You stamp."), user("again")], agent: "bot" }).catch((caught: unknown) => caught as ProviderError);
    expect(error).toMatchObject({ code: "provider_script_exhausted" });
    expect(error.message).toBe('the replay has no turn left: agent `bot` called the model once more than recorded (2 turns); its request ends with message 2 (user): "again"');
  });

  it("lets a redacted secret in the recording match whatever the text is now", async () => {
    const model = new ScriptedModel({ agents: { bot: [{ request: [{ role: "system", content: "S" }, { role: "user", content: "key [redacted] ok" }], text: "fine" }] } });
    expect((await model.generate({ messages: [system("S"), user("key sk-live-123456789 ok")], agent: "bot" })).message.content).toBe("fine");
  });

  it("still checks the recorded tool results of a one-list script written before requests were recorded", async () => {
    const model = new ScriptedModel([{ tool_calls: [{ id: "c1", name: "stamp", arguments: { word: "alpha" }, result: "v1:alpha" }] }, "done"]);
    const first = await model.generate({ messages: [user("x")] });
    const error = await model
      .generate({ messages: [user("x"), { role: "assistant", content: null, toolCalls: first.toolCalls }, { role: "tool", content: "v2:alpha", toolCallId: "c1" }] })
      .catch((caught: unknown) => caught as Error);
    expect(error.message).toContain('the replay diverged at turn 1: its tool call stamp({"word":"alpha"}) now returns "v2:alpha", but the recorded run got "v1:alpha"');
  });
});
