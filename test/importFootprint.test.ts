import { spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./helpers/runCli.js";
import { tempDir } from "./helpers/tempTree.js";

// `import "lllm"` must stay light for library users: the heavy dependencies load when first used. Checked on the
// built package (dist/) in a fresh node, with a module hook that lists every ES module loaded and, at exit, every
// CommonJS module in the require cache.
const dir = tempDir("lllm-footprint-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hooks = path.join(dir, "hooks.mjs");
writeFileSync(hooks, 'import { appendFileSync } from "node:fs";\nexport async function load(url, context, next) {\n  appendFileSync(process.env.LLLM_MODULE_LIST, `${url}\\n`);\n  return next(url, context);\n}\n');
const register = path.join(dir, "register.mjs");
writeFileSync(
  register,
  `import { appendFileSync } from "node:fs";\nimport { createRequire, register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n` +
    'const require = createRequire(import.meta.url);\nprocess.on("exit", () => appendFileSync(process.env.LLLM_MODULE_LIST, Object.keys(require.cache).join("\\n") + "\\n"));\n',
);

/** Run `code` as an ES module in a fresh node; returns every module it loaded and what it printed. */
function modulesLoadedBy(code: string, name: string): Promise<{ modules: string[]; stdout: string; stderr: string; code: number | null }> {
  const list = path.join(dir, `${name}.txt`);
  writeFileSync(list, "");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", pathToFileURL(register).href, "--input-type=module", "-e", code], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, LLLM_MODULE_LIST: list },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (exit) => resolve({ modules: readFileSync(list, "utf8").split("\n").filter(Boolean), stdout, stderr, code: exit }));
  });
}

// What `import "lllm"` loads: the package's "." export (the bundle in dist/bundle/).
const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { exports: Record<string, { import: string }> };
const index = pathToFileURL(path.join(ROOT, pkg.exports["."]!.import)).href;
const HEAVY = ["@modelcontextprotocol/sdk", "openai", "@anthropic-ai/sdk", "zod", "jiti", "smol-toml", "yaml", "ajv"];
/** A dependency is loaded from node_modules, from its one-file copy (dist/vendor/) or from its chunk of the bundle. */
const loaded = (modules: string[], name: string) =>
  modules.some((module) => module.includes(`/node_modules/${name}/`) || module.endsWith(`/dist/vendor/${name}.cjs`) || module.includes(`/dist/bundle/dep-${name.replace(/^@/, "").replace("/", "-")}-`));

describe('import "lllm"', () => {
  it("loads none of the MCP SDK, openai, Anthropic's SDK, zod, jiti, TOML, yaml or ajv", async () => {
    const result = await modulesLoadedBy(`const lllm = await import(${JSON.stringify(index)}); console.log(typeof lllm.Agent, typeof lllm.McpConnections, typeof lllm.createPackageServer);`, "plain");
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("function function function\n");
    // The hook saw the library itself, so an empty list cannot pass for a light one.
    expect(result.modules.some((module) => module === index)).toBe(true);
    expect(HEAVY.filter((name) => loaded(result.modules, name))).toEqual([]);
  });

  it("still gives `z`, loading zod when it is first used", async () => {
    const result = await modulesLoadedBy(
      `const { z, tool } = await import(${JSON.stringify(index)}); const t = tool({ name: "t", description: "d", parameters: z.object({ city: z.string() }), run: ({ city }) => city }); console.log(JSON.stringify(t.toTool().function.parameters.properties));`,
      "zod",
    );
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe('{"city":{"type":"string"}}\n');
    expect(loaded(result.modules, "zod")).toBe(true);
  });

  it("creating anthropic/ and gemini/ models loads no SDK, and an OpenAI call never loads Anthropic's", async () => {
    const result = await modulesLoadedBy(
      `const { createModel } = await import(${JSON.stringify(index)}); createModel({ model: "anthropic/claude-haiku-4-5", env: { ANTHROPIC_API_KEY: "k" } }); createModel({ model: "gemini/gemini-2.5-flash", env: { GEMINI_API_KEY: "k" } }); const m = createModel({ model: "gpt-4o-mini", env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }, retry: { maxRetries: 0 } }); await m.generate({ messages: [{ role: "user", content: "hi" }] }).catch(() => {}); console.log("ok");`,
      "providers",
    );
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("ok\n");
    expect(loaded(result.modules, "openai")).toBe(true);
    expect(loaded(result.modules, "@anthropic-ai/sdk")).toBe(false);
  });
});
