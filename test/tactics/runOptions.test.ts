import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { prepareTactic } from "../../src/tactics/prepareTactic.js";
import { runTactic } from "../../src/tactics/runTactic.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-runoptions-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = path.join(dir, "t.yaml");
writeFileSync(file, "name: t\nprompt: 'In {language}: {input}'\nagent_configs:\n  - name: a\n    model_name: gpt-test\n    system_prompt: You answer.\n    model_args: {temperature: 0}\n");

describe("runTactic answers what lllm run used to do itself", () => {
  it("dryRun: answers the first request's body as the provider would send it, calling no model", async () => {
    const prepared = await prepareTactic(file, { cwd: dir, home: dir });
    let started = 0;
    const result = await runTactic(prepared, { input: "hi", vars: { language: "French" }, dryRun: true, onStart: () => void (started += 1), env: {} });
    expect(result.output).toBeNull();
    expect(result.usage.llmCalls).toBe(0);
    expect(result.dryRunRequest).toMatchObject({ model: "gpt-test", temperature: 0, messages: [{ role: "system", content: "You answer." }, { role: "user", content: "In French: hi" }] });
    expect(started).toBe(1);
  });

  it("a placeholder nothing fills is a ConfigError before the run starts", async () => {
    const prepared = await prepareTactic(file, { cwd: dir, home: dir });
    let started = false;
    const error = await runTactic(prepared, { input: "hi", dryRun: true, onStart: () => void (started = true) }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe("template_missing_variable");
    expect((error as ConfigError).message).toContain("{language} in prompt has no value");
    expect(started).toBe(false);
  });
});
