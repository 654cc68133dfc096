import { describe, expect, it, vi } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { tacticAsFunction } from "../../src/tactics/tacticAsFunction.js";
import { FunctionCall } from "../../src/tools/index.js";

function recorder(answer: unknown = "done") {
  return vi.fn(async (_input: unknown) => answer);
}

describe("tacticAsFunction, task mode (seed 000 Step 8)", () => {
  it("has one required task parameter and passes the task to the tactic", async () => {
    const call = recorder("Looks fine.");
    const review = tacticAsFunction({ name: "code_review", description: "Review a Python snippet and list concrete problems.", call });
    expect(review.name).toBe("code_review");
    expect(review.required).toEqual(["task"]);
    expect(review.toTool()).toEqual({
      type: "function",
      function: { name: "code_review", description: "Review a Python snippet and list concrete problems.", parameters: { type: "object", properties: { task: { type: "string", description: "The task for the tactic" } }, required: ["task"], additionalProperties: false }, strict: true },
    });
    const result = await review.call(new FunctionCall({ name: "code_review", arguments: { task: "def f(): pass" } }), { cwd: "/tmp" });
    expect(call).toHaveBeenCalledWith("def f(): pass", expect.objectContaining({ cwd: "/tmp" }));
    expect(result.resultStr).toBe("Return of calling function code_review with arguments {'task': 'def f(): pass'}:\n---\nLooks fine.\n---");
  });

  it("validates a string task against a string input schema", async () => {
    const call = recorder();
    const tool = tacticAsFunction({ name: "short", description: "", inputSchema: { type: "string", maxLength: 5 }, call });
    expect((await tool.call(new FunctionCall({ name: "short", arguments: { task: "far too long" } }))).resultStr).toBe("Error: Invalid input for short: task must NOT have more than 5 characters");
    expect(call).not.toHaveBeenCalled();
    expect((await tool.call(new FunctionCall({ name: "short", arguments: { task: "ok" } }))).error).toBeUndefined();
  });

  it("decodes the task from JSON for a non-string input schema", async () => {
    const call = recorder();
    const tool = tacticAsFunction({ name: "plan", description: "", inputSchema: { $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { city: { type: "string" }, days: { type: "integer", minimum: 1, default: 3 } }, required: ["city"] }, call });
    expect(tool.required).toEqual(["task"]);
    expect(tool.properties.task!.description).toMatch(/^The task for the tactic, as JSON matching this schema: \{"type":"object"/);
    await tool.call(new FunctionCall({ name: "plan", arguments: { task: '{"city": "Paris"}' } }));
    expect(call).toHaveBeenLastCalledWith({ city: "Paris", days: 3 }, expect.any(Object));
    expect((await tool.call(new FunctionCall({ name: "plan", arguments: { task: '{"days": 0}' } }))).resultStr).toBe("Error: Invalid input for plan: task must have required property 'city'; 'days' must be >= 1");
    expect((await tool.call(new FunctionCall({ name: "plan", arguments: { task: "Paris for two days" } }))).resultStr).toBe("Error: Invalid input for plan: task must be object");
    const count = tacticAsFunction({ name: "count", description: "", inputSchema: { type: "integer" }, call });
    await count.call(new FunctionCall({ name: "count", arguments: { task: "42" } }));
    expect(call).toHaveBeenLastCalledWith(42, expect.any(Object));
    expect(call).toHaveBeenCalledTimes(2);
  });

  it("reports a missing task as an argument error", async () => {
    const tool = tacticAsFunction({ name: "review", description: "", call: recorder() });
    expect((await tool.call(new FunctionCall({ name: "review", arguments: {} }))).resultStr).toBe("Error: Invalid arguments for review: missing required argument 'task' (string)");
  });
});

describe("tacticAsFunction, kwargs mode", () => {
  const inputSchema = {
    type: "object",
    properties: { city: { type: "string", description: "The city" }, days: { type: "integer", minimum: 1, default: 3 } },
    required: ["city"],
    additionalProperties: false,
  };

  it("publishes the input's fields as parameters and passes the object", async () => {
    const call = recorder({ ok: true });
    const tool = tacticAsFunction({ name: "plan", description: "Plan a trip", inputSchema, parameterMode: "kwargs", call });
    expect(tool.toTool().function.parameters).toEqual({ type: "object", properties: { city: { type: "string", description: "The city" }, days: { type: "integer", minimum: 1, description: "(default: 3)" } }, required: ["city"], additionalProperties: false });
    const result = await tool.call(new FunctionCall({ name: "plan", arguments: { city: "Oslo" } }));
    expect(call).toHaveBeenCalledWith({ city: "Oslo", days: 3 }, expect.any(Object));
    expect(result.result).toEqual({ ok: true });
  });

  it("validates the whole input, and argument errors go back to the model", async () => {
    const call = recorder();
    const tool = tacticAsFunction({
      name: "plan",
      description: "",
      inputSchema: { ...inputSchema, dependentRequired: { days: ["city"] }, not: { properties: { city: { const: "Atlantis" } }, required: ["city"] } },
      parameterMode: "kwargs",
      call,
    });
    expect((await tool.call(new FunctionCall({ name: "plan", arguments: { city: 5 } }))).resultStr).toBe("Error: Invalid arguments for plan: argument 'city' must be string, got number 5");
    // Only the whole schema knows this one.
    expect((await tool.call(new FunctionCall({ name: "plan", arguments: { city: "Atlantis" } }))).resultStr).toBe("Error: Invalid input for plan: input must NOT be valid");
    expect(call).not.toHaveBeenCalled();
  });

  it("keeps the task parameter for an input without fields", () => {
    const tool = tacticAsFunction({ name: "echo", description: "", inputSchema: { type: "string" }, parameterMode: "kwargs", call: recorder() });
    expect(tool.required).toEqual(["task"]);
  });

  it("rejects an input schema that is not JSON Schema", () => {
    expect(() => tacticAsFunction({ name: "bad", description: "", inputSchema: { type: "strung" }, call: recorder() })).toThrow(ConfigError);
    expect(() => tacticAsFunction({ name: "bad name!", description: "", call: recorder() })).toThrow(/tool name `bad name!` is not valid/);
  });
});
