import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.js";
import { tempTree } from "../helpers/tempTree.js";

// Issue 29, point 12's last part: a SIGTERM while lllm parses a huge file waited for the parse (16 MB of scripted
// turns: some 9 s), and JavaScript cannot be interrupted mid-parse. Model scripts are now bounded as config files
// are (4 MB, nesting as deep as a config file), so the parse is short; and a long list no longer overflows the
// stack of the parse cache's walk ("internal error: Maximum call stack size exceeded").
const CLI = { timeoutMs: 120_000 };
const TACTIC = 'name: t\nprompt: "{input}"\nglobal:\n  model_name: gpt-4o-mini\nagent_configs:\n  - name: bot\n    system_prompt: Hi.\n';

describe("model script files are bounded", () => {
  it("a script over 4 MB is refused before it is read (exit 2, its size and the limit)", async () => {
    const dir = tempTree({ "t.yaml": TACTIC });
    writeFileSync(path.join(dir, "turns.yaml"), `- "${"x".repeat(5 * 1024 * 1024)}"\n`);
    const result = await runCli(["run", "t.yaml", "--input", "hi", "--model", "scripted:turns.yaml"], { ...CLI, cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/model script .*turns\.yaml is 5(\.\d)? MB; a model script may be at most 4 MB/);
    expect(result.stdout).toBe("");
  }, 150_000);

  it("a script nested deeper than a config file may nest is refused at its line (exit 2), not a stack overflow", async () => {
    const dir = tempTree({ "t.yaml": TACTIC, "turns.yaml": `- content: ${"[".repeat(5000)}${"]".repeat(5000)}\n` });
    const result = await runCli(["run", "t.yaml", "--input", "hi", "--model", "scripted:turns.yaml"], { ...CLI, cwd: dir });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("turns.yaml:1:");
    expect(result.stderr).toContain("values nest more than 100 levels deep");
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
  }, 150_000);

  it("a script of 200,000 turns runs (the parse cache walks it without spreading it onto the stack)", async () => {
    const dir = tempTree({ "t.yaml": TACTIC });
    writeFileSync(path.join(dir, "turns.yaml"), `- First.\n${"- x\n".repeat(200_000)}`);
    const result = await runCli(["run", "t.yaml", "--input", "hi", "--model", "scripted:turns.yaml"], { ...CLI, cwd: dir });
    expect(result.stderr).not.toMatch(/internal error|Maximum call stack/);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("First.\n");
  }, 150_000);
});
