import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ConfigError, ToolError } from "../../src/errors.js";
import { FunctionCall, functionFromDeclaration, type FunctionTool } from "../../src/tools/index.js";

const baseDir = fileURLToPath(new URL("./fixtures/commands/", import.meta.url));
const file = `${baseDir}tools.yaml`;

function commandTool(command: string[], extra: Record<string, unknown> = {}): FunctionTool {
  return functionFromDeclaration({ name: "cmd", description: "A command tool", parameters: { city: { type: "string" }, unit: { type: "string", default: "celsius" } }, command, ...extra }, { file, baseDir });
}

async function callWith(target: FunctionTool, args: Record<string, unknown> = { city: "Paris" }, signal?: AbortSignal): Promise<FunctionCall> {
  return target.call(new FunctionCall({ name: target.name, arguments: args }), signal ? { signal } : {});
}

describe("command tools", () => {
  it("get the arguments (defaults applied) as JSON on stdin, run in the declaration's folder, and return parsed JSON", async () => {
    const call = await callWith(commandTool(["python3", "echo_args.py"]));
    expect(call.error).toBeUndefined();
    expect(call.result).toEqual({ received: { city: "Paris", unit: "celsius" }, cwd: "commands" });
    expect(call.resultStr).toBe(`Return of calling function cmd with arguments {'city': 'Paris'}:\n---\n{"received":{"city":"Paris","unit":"celsius"},"cwd":"commands"}\n---`);
  });

  it("return plain stdout as text without print()'s newline", async () => {
    expect((await callWith(commandTool(["python3", "plain_text.py"]))).result).toBe("Sunny in Paris");
  });

  it("a non-zero exit reports the end of stderr", async () => {
    const call = await callWith(commandTool(["python3", "fail.py"]));
    expect(call.resultStr).toBe("Error: starting\nValueError: city not found: Atlantis");
  });

  it("a long stderr is cut to its last 20 lines", async () => {
    const call = await callWith(commandTool(["python3", "many_lines.py"]));
    expect(call.error!.split("\n")).toEqual(Array.from({ length: 20 }, (_, index) => `line ${80 + index}`));
  });

  it("a non-zero exit without stderr names the exit code", async () => {
    expect((await callWith(commandTool(["python3", "silent_fail.py"]))).resultStr).toBe("Error: command exited with code 3");
  });

  it("a program that runs past its timeout is killed, and the result says so", async () => {
    const call = await callWith(commandTool(["python3", "sleep.py"], { timeout: 1 }));
    expect(call.resultStr).toBe("Error: command `python3 sleep.py` timed out after 1 s and was killed");
  });

  it("the timeout also kills what the program started (the whole process group)", async () => {
    // The shell's `sleep` child holds stdout open; if only the shell were killed the call would hang for 60 s.
    const call = await callWith(commandTool(["sh", "-c", "sleep 60; echo late"], { timeout: 1 }));
    expect(call.resultStr).toBe("Error: command `sh -c sleep 60; echo late` timed out after 1 s and was killed");
  });

  it("aborting the run's signal kills the program", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const call = await callWith(commandTool(["python3", "sleep.py"]), undefined, controller.signal);
    expect(call.resultStr).toBe("Error: command `python3 sleep.py` was cancelled");
  });

  it("a program that does not exist is named in the error", async () => {
    const call = await callWith(commandTool(["lllm-no-such-program", "x.py"]));
    expect(call.resultStr).toBe("Error: cannot run `lllm-no-such-program x.py`: program `lllm-no-such-program` was not found");
  });
});

describe("declaration files", () => {
  it("the YAML form of get_weather gives the seed's schema", () => {
    const weather = functionFromDeclaration(parse(readFileSync(`${baseDir}weather.yaml`, "utf8")), { file: `${baseDir}weather.yaml`, baseDir });
    expect(weather.toTool()).toEqual(JSON.parse(readFileSync(new URL("./fixtures/get_weather.tool.json", import.meta.url), "utf8")));
    expect(weather.isDeclaration).toBe(false);
    expect(weather.source).toEqual({ file: `${baseDir}weather.yaml` });
  });

  it("without a command it is a declaration to bind by name", async () => {
    const search = functionFromDeclaration({ name: "web_search", description: "Search the web", parameters: { query: { type: "string" } }, side_effects: false, approval: "never" }, { file, baseDir });
    expect(search.isDeclaration).toBe(true);
    expect(search.sideEffects).toBe(false);
    expect(search.approval).toBe("never");
    await expect(callWith(search, { query: "x" })).rejects.toThrow(ToolError);
  });

  it("reports every problem at once, naming the file and the fix", () => {
    let error: unknown;
    try {
      functionFromDeclaration({ name: "fetch page", description: 3, sideEffects: true, command: "python3 fetch.py", timeout: -1, approval: "sometimes" }, { file, baseDir });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect((error as ConfigError).code).toBe("tool_invalid");
    expect(problems.map((problem) => problem.message)).toEqual([
      "unknown key `sideEffects` in a tool declaration; did you mean `side_effects`?",
      "tool name `fetch page` is not valid: names must match ^[a-zA-Z0-9_-]{1,64}$ (letters, digits, _ and -, at most 64 characters)",
      "tool `fetch page` needs a `description` (a string), got number",
      "tool `fetch page`: `command` must be a list (no shell is used), got a string",
      "tool `fetch page`: `timeout` must be a positive number of seconds, got -1",
      'tool `fetch page`: `approval` must be "required" or "never", got "sometimes"',
    ]);
    expect(problems.every((problem) => problem.location?.file === file)).toBe(true);
    expect(problems[3]!.hint).toBe("Write it as a list: [python3, fetch.py].");
    expect((error as ConfigError).message).toContain(file);
  });

  it("a declaration that is not a mapping", () => {
    expect(() => functionFromDeclaration(["name", "x"], { file, baseDir })).toThrow(/a tool declaration must be a mapping, got array/);
  });
});
