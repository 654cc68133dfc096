import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Registry } from "../../src/registry/index.js";
import { FunctionCall } from "../../src/tools/index.js";
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

describe("tool files of every module flavour", () => {
  it("a tool that is the whole module (`module.exports = tool(…)`, `export = tool(…)`) loads", async () => {
    const tools = path.join(dir, "cjs", "tools");
    mkdirSync(tools, { recursive: true });
    const spec = (name: string): string => `{ name: "${name}", description: "Echoes.", parameters: { x: { type: "string" } }, run: ({ x }) => "${name}:" + x }`;
    writeFileSync(path.join(tools, "whole.cjs"), `const { tool } = require("lllm");\nmodule.exports = tool(${spec("whole_cjs")});\n`);
    writeFileSync(path.join(tools, "whole.cts"), `import { tool } from "lllm";\nexport = tool(${spec("whole_cts").replace("({ x })", "({ x }: { x: string })")});\n`);
    const registry = await Registry.load({ packages: [path.join(dir, "cjs")], cwd: dir, home: dir });
    expect(registry.brokenFiles()).toEqual([]);
    for (const name of ["whole_cjs", "whole_cts"]) {
      const call = await registry.resolveTool(`cjs.tools:${name}`).tool.call(new FunctionCall({ name, arguments: { x: "a" } }));
      expect(call.result).toBe(`${name}:a`);
    }
  });
});
