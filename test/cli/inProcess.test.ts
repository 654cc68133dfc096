import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempTree } from "../helpers/tempTree.js";

// The error-message cases run main(argv) in-process: that is only worth anything while it prints and exits exactly
// as the binary does. Each case here runs both ways and compares.
const AGENT = `agent_configs:\n  - name: bot\n    model_name: m\n    system_prompt: hi\n`;

describe("runCliInProcess matches the built binary", () => {
  const cases: Array<{ name: string; args: string[]; files?: Record<string, string> }> = [
    { name: "a usage error", args: ["valdate", "x.yaml"] },
    { name: "a usage error with --json", args: ["run", "--json", "--approve", "maybe", "t.yaml"] },
    { name: "help", args: ["tools", "--help"] },
    { name: "a config error", args: ["validate", "tactic.yaml"], files: { "tactic.yaml": `${AGENT}    modle_args: {}\n` } },
    { name: "a config error with --json", args: ["validate", "tactic.yaml", "--json"], files: { "tactic.yaml": `${AGENT}    max_interrupt_steps: three\n` } },
    { name: "a valid tactic", args: ["validate", "tactic.yaml"], files: { "tactic.yaml": AGENT } },
  ];
  for (const testCase of cases) {
    it(testCase.name, async () => {
      const cwd = tempTree(testCase.files ?? {});
      const spawned = await runCli(testCase.args, { cwd });
      const inProcess = await runCliInProcess(testCase.args, { cwd });
      expect(inProcess).toEqual(spawned);
    });
  }

  it("restores the environment, the working folder and the streams afterwards", async () => {
    const before = { env: { ...process.env }, cwd: process.cwd(), write: process.stdout.write, exitCode: process.exitCode };
    await runCliInProcess(["validate", "missing.yaml"], { cwd: tempTree({}), env: { LLLM_TEST_ONLY: "x" } });
    expect({ env: { ...process.env }, cwd: process.cwd(), write: process.stdout.write, exitCode: process.exitCode }).toEqual(before);
  });
});
