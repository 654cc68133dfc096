import { existsSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { findPython } from "../../src/sandbox/findPython.js";
import { packageTarball } from "../helpers/tarball.js";
import { tempDir } from "../helpers/tempTree.js";
import { lllm, PROMPT_PACKAGE } from "./packageFixtures.js";

// A package of YAML tactics alone whose tactics run model-written code (code-action, run_python) under the default
// `sandbox: {backend: auto}` is installed without a question: on a machine with neither bubblewrap nor gVisor
// (a PATH that holds only python3) its runs are refused before the model's code runs, never run unisolated. The
// advice says how to allow it in a file of the user's own: the package's cached tactic cannot be edited (a run
// refuses a package changed after it was trusted), so "set `sandbox: {backend: none}` in the tactic" was no way out.
let pythonOnly = "";
beforeAll(async () => {
  pythonOnly = tempDir("lllm-python-only-");
  symlinkSync((await findPython()).executable, path.join(pythonOnly, "python3"));
});

const CODE_ACTION = ["name: calc", "tactic_type: code-action", "global:", "  model_name: gpt-4o-mini", "agent_configs:", "  - name: a", "    system_prompt: You compute.", ""].join("\n");
const RUN_PYTHON = [
  "name: analyst",
  "global:",
  "  model_name: gpt-4o-mini",
  "  proxy: {activate_proxies: [notes], exec_env: interpreter}",
  "agent_configs:",
  "  - name: a",
  "    system_prompt: You analyse.",
  "",
].join("\n");
const PROXY = ["path: notes", "name: Notes", "description: Notes.", "base_url: https://api.example.net", "endpoints:", "  - {category: notes, endpoint: list, description: The notes.}", ""].join("\n");

describe("an installed package's tactic that runs model-written code, on a machine without a sandbox", () => {
  it("is refused with advice that names a tactic of the user's own over it, which then runs", async () => {
    const dir = tempDir("lllm-project-");
    const home = tempDir("lllm-home-");
    const marker = path.join(dir, "the-program-ran");
    writeFileSync(path.join(dir, "calc.tgz"), packageTarball({ ...PROMPT_PACKAGE, "lllm.toml": '[package]\nname = "calc"\nversion = "1.0.0"\n', "tactics/calc.yaml": CODE_ACTION, "tactics/analyst.yaml": RUN_PYTHON, "proxies/notes.yaml": PROXY }));
    const program = ["- text: |", "    ```python", `    open(${JSON.stringify(marker)}, "w").write("ran")`, "    final_answer(6 * 7)", "    ```", ""].join("\n");
    writeFileSync(path.join(dir, "script.yaml"), program);
    writeFileSync(path.join(dir, "python.yaml"), ["- tool_calls:", `    - {name: run_python, arguments: {code: ${JSON.stringify(`open(${JSON.stringify(marker)}, "w")`)}}}`, "- text: done", ""].join("\n"));

    // YAML tactics alone: no code to consent to.
    const added = await lllm(["add", "calc.tgz"], { cwd: dir, home });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stderr).toContain("no code");

    const advice = (backend: string): string => `run a tactic of your own that says \`base: calc.tactics:${backend}\` and \`sandbox: {backend: none}\``;
    const noSandbox = { PATH: pythonOnly };
    const codeAction = await lllm(["run", "calc.tactics:calc", "--model", "scripted:script.yaml", "--input", "go"], { cwd: dir, home, env: noSandbox });
    expect(codeAction.code, codeAction.stderr).toBe(1);
    expect(codeAction.stdout).toBe("");
    expect(codeAction.stderr).toContain("code-action runs model-written code only in a sandbox, and none works here: bwrap is not installed; runsc is not installed");
    expect(codeAction.stderr).toContain(advice("calc"));
    expect(codeAction.stderr).toContain("comes from an installed package, whose files cannot be edited");
    expect(codeAction.stderr).not.toContain("in the tactic.");
    // Refused before its first model call: nothing to go on from, so no `lllm run --resume` advice.
    expect(codeAction.stderr).not.toContain("--resume");
    const runPython = await lllm(["run", "calc.tactics:analyst", "--model", "scripted:python.yaml", "--input", "go"], { cwd: dir, home, env: noSandbox });
    expect(runPython.code, runPython.stderr).toBe(1);
    expect(runPython.stderr).toContain("run_python of agent `a` runs model-written code only in a sandbox, and none works here");
    expect(runPython.stderr).toContain(advice("analyst"));
    expect(existsSync(marker)).toBe(false); // the model's code never ran

    // The advice followed: the user's own tactic over the package's says backend none, and the program runs.
    writeFileSync(path.join(dir, "mine.yaml"), "name: mine\nbase: calc.tactics:calc\nsandbox: {backend: none}\n");
    const mine = await lllm(["run", "mine.yaml", "--model", "scripted:script.yaml", "--input", "go"], { cwd: dir, home, env: noSandbox });
    expect(mine.stderr).not.toContain("error");
    expect(mine.code, mine.stderr).toBe(0);
    expect(mine.stdout).toBe("42\n");
    expect(existsSync(marker)).toBe(true);
  }, 180_000);
});
