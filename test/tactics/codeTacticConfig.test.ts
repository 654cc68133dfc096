import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { prepareTactic } from "../../src/tactics/prepareTactic.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-codetactic-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(path.join(dir, "kit", "tactics"), { recursive: true });
writeFileSync(path.join(dir, "kit", "lllm.toml"), 'name = "kit"\nversion = "0.1.0"\n');

function codeTactic(name: string, config: string): string {
  const file = path.join(dir, "kit", "tactics", `${name}.ts`);
  writeFileSync(file, `import { tactic } from "lllm";\n\nexport default tactic({\n  name: "${name}",\n  description: "d",\n  config: ${config},\n  call: async () => "ok",\n});\n`);
  return file;
}

describe("a tactic written in code: its config is used as data", () => {
  it("keeps values as given (no YAML round trip) and leaves out undefined keys", async () => {
    const file = codeTactic("plain", '{ vars: { when: "2024-01-01", note: undefined }, description: undefined, agent_configs: [{ name: "a", model_name: "gpt-test", system_prompt: "Hi." }] }');
    const prepared = await prepareTactic(file, { cwd: dir, home: dir });
    expect(prepared.tactic.config.vars).toEqual({ when: "2024-01-01" });
  });

  it("a config problem points at the code file, never at a line of text that does not exist", async () => {
    const file = codeTactic("broken", '{ agent_configs: [{ name: "a", model_name: "gpt-test", system_promt: "Hi." }] }');
    const error = await prepareTactic(file, { cwd: dir, home: dir }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((problem) => problem.location?.file.endsWith("broken.ts") && problem.location.line === undefined)).toBe(true);
    expect((error as ConfigError).message).toContain("system_promt");
  });
});
