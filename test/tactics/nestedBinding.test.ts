import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { prepareTactic } from "../../src/tactics/prepareTactic.js";
import { runTactic } from "../../src/tactics/runTactic.js";
import { ScriptedModel } from "../../src/testing/index.js";
import { runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A package `desk` whose `top` tactic uses its `helper` tactic as a tool; `helperTools` is the helper's tools list. */
function deskPackage(helperTools: string[]): { dir: string; top: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-nested-"));
  made.push(dir);
  mkdirSync(path.join(dir, "desk", "tactics"), { recursive: true });
  mkdirSync(path.join(dir, "desk", "tools"), { recursive: true });
  writeFileSync(path.join(dir, "desk", "lllm.toml"), 'name = "desk"\nversion = "0.1.0"\n');
  writeFileSync(path.join(dir, "desk", "tools", "shout.js"), 'export default { name: "shout", description: "Upper-case a text.", parameters: { text: { type: "string" } }, run: ({ text }) => String(text).toUpperCase() };\n');
  writeFileSync(
    path.join(dir, "desk", "tactics", "helper.yaml"),
    `name: helper\ndescription: Helps.\nagent_configs:\n  - name: helper\n    model_name: gpt-test\n    system_prompt: You help.\n    tools: [${helperTools.join(", ")}]\n`,
  );
  const top = path.join(dir, "desk", "tactics", "top.yaml");
  writeFileSync(top, "name: top\npackages: [..]\nagent_configs:\n  - name: boss\n    model_name: gpt-test\n    system_prompt: You lead.\n    tools: [desk.tactics:helper, desk.tactics:top]\n");
  return { dir, top };
}

describe("nested tactics are bound by prepareTactic", () => {
  it("a nested tactic's missing tool is a ConfigError of prepareTactic, located in the nested file", async () => {
    const { dir, top } = deskPackage(["no_such_tool"]);
    const error = await prepareTactic(top, { cwd: dir, home: dir }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((problem) => [path.basename(problem.location?.file ?? ""), problem.location?.line])).toEqual([["helper.yaml", 7]]);
    expect((error as ConfigError).message).toContain("no_such_tool");
  });

  it("lllm validate reports a nested tactic's missing tool with exit 2", async () => {
    const { dir, top } = deskPackage(["no_such_tool"]);
    const result = await runCli(["validate", top], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("helper.yaml:7");
    expect(result.stderr).toContain("no_such_tool");
  });

  it("each nested tactic is prepared once and shared; a tactic that uses itself as a tool finds itself", async () => {
    const { dir, top } = deskPackage(["desk.tools:shout"]);
    const prepared = await prepareTactic(top, { cwd: dir, home: dir });
    expect([...prepared.nested.keys()].map((file) => path.basename(file)).sort()).toEqual(["helper.yaml", "top.yaml"]);
    expect(prepared.nested.get(top)).toBe(prepared);
    const helper = prepared.nested.get(path.join(dir, "desk", "tactics", "helper.yaml"))!;
    expect(helper.nested).toBe(prepared.nested);
    expect(helper.agents[0]!.tools.map((bound) => bound.tool.name)).toEqual(["shout"]);

    const model = new ScriptedModel([{ tool_calls: [{ name: "helper", arguments: { task: "hi" } }] }, { tool_calls: [{ name: "shout", arguments: { text: "hi" } }] }, "HI", "done: HI"]);
    const result = await runTactic(prepared, { input: "go", createModel: () => model, cwd: dir });
    expect(result.output).toBe("done: HI");
    expect(result.toolCalls.map((call) => call.name)).toEqual(["shout", "helper"]);
  });
});

describe("pkg.tactics:name#tool is checked by prepareTactic", () => {
  it("a YAML tactic has no tools to pick: lllm validate says so at the entry's line", async () => {
    // The CLI's main() in this process; the validate above spawns the built CLI, end to end.
    const { dir } = deskPackage(["desk.tools:shout"]);
    const file = path.join(dir, "desk", "tactics", "picker.yaml");
    writeFileSync(file, "name: picker\npackages: [..]\nagent_configs:\n  - name: a\n    model_name: gpt-test\n    system_prompt: Hi.\n    tools: [desk.tactics:helper#summarise]\n");
    const result = await runCliInProcess(["validate", file], { cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("picker.yaml:7");
    expect(result.stderr).toContain("a YAML tactic has no tools to pick");
  });
});
