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

  it("throws a clear error on a call with no turn left", async () => {
    const model = new ScriptedModel(["only"]);
    await model.generate({ messages: [] });
    await expect(model.generate({ messages: [] })).rejects.toThrow("ScriptedModel: no scripted turn left for call #2; the script has 1 turns");
    await expect(model.generate({ messages: [] })).rejects.toBeInstanceOf(ProviderError);
  });

  it("assertComplete fails when turns were never used", async () => {
    const model = new ScriptedModel(["one", "two", "three"]);
    await model.generate({ messages: [] });
    expect(() => model.assertComplete()).toThrow("2 of 3 scripted turns were never used");
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
      "turns[2].txt: unknown key `txt`; a turn has text, tool_calls, usage, finish_reason",
    ]);
    expect(error.problems.map((problem) => problem.location?.line)).toEqual([4, 5]);
    expect(error.message).toContain(`${file}:4`);
  });

  it("says what is expected for an empty file or a mapping without turns", () => {
    expect(loadError(scriptFile("empty.yaml", "")).message).toContain("model script is empty");
    expect(loadError(scriptFile("noturns.yaml", "steps: []\n")).message).toContain("no `turns` key (found `steps`)");
  });
});
