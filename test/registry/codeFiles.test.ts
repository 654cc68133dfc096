import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Registry } from "../../src/registry/index.js";
import { prepareTactic } from "../../src/tactics/prepareTactic.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "lllm-codefiles-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pkg = path.join(dir, "kit");
mkdirSync(path.join(pkg, "tactics"), { recursive: true });
writeFileSync(path.join(pkg, "lllm.toml"), 'name = "kit"\nversion = "0.1.0"\n');
const definition = (name: string): string =>
  `{ name: "${name}", description: "Says hi.", config: { agent_configs: [{ name: "a", model_name: "gpt-test", system_prompt: "Hi." }] }, call: async () => "hi" }`;
writeFileSync(path.join(pkg, "tactics", "common.cjs"), `const { tactic } = require("lllm");\nmodule.exports = { default: tactic(${definition("common")}) };\n`);
writeFileSync(path.join(pkg, "tactics", "typed.cts"), `import { tactic } from "lllm";\nexport default tactic(${definition("typed")});\n`);

describe("code files of every module flavour", () => {
  it("indexes .cjs and .cts tactics, like .ts and .mjs ones", async () => {
    const registry = await Registry.load({ packages: [pkg], cwd: dir, home: dir });
    expect(registry.resolveEntry("tactics", "kit.tactics:common").file).toBe(path.join(pkg, "tactics", "common.cjs"));
    expect(registry.resolveEntry("tactics", "kit.tactics:typed").file).toBe(path.join(pkg, "tactics", "typed.cts"));
  });

  it("prepares a .cjs tactic", async () => {
    const prepared = await prepareTactic(path.join(pkg, "tactics", "common.cjs"), { cwd: dir, home: dir });
    expect(prepared.tactic.config.name).toBe("common");
    expect(prepared.agents.map((agent) => agent.name)).toEqual(["a"]);
  });
});
