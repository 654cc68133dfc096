import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { Registry } from "../../src/registry/index.js";
import { FunctionCall, FunctionTool } from "../../src/tools/index.js";
import { declarationFile, tempTree, toolFile } from "./fixtures/tree.js";

/** Load one package folder made of `files` (a package folder anywhere on disk, with nothing installed). */
async function loadPackage(files: Record<string, string>): Promise<{ registry: Registry; dir: string }> {
  const root = tempTree(files);
  const registry = await Registry.load({ packages: [root], cwd: root, home: root });
  return { registry, dir: root };
}

async function loadPackageError(files: Record<string, string>): Promise<{ error: ConfigError; dir: string }> {
  const root = tempTree(files);
  // Broken tool files do not fail the load (the package's other tools stay usable); they are asserted here.
  const error = await Registry.load({ packages: [root], cwd: root, home: root }).then((registry) => registry.assertNoBrokenFiles()).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return { error: error as ConfigError, dir: root };
}

async function call(tool: FunctionTool, args: Record<string, unknown>): Promise<FunctionCall> {
  return tool.call(new FunctionCall({ name: tool.name, arguments: args }));
}

describe("tool files", () => {
  it("loads a .ts tool with type annotations, no build step, `import { tool } from \"lllm\"`", async () => {
    const { registry, dir } = await loadPackage({
      "lllm.yaml": "name: calc\n",
      "tools/add.ts": [
        'import { tool } from "lllm";',
        "interface Pair { a: number; b: number }",
        "const sum = (pair: Pair): number => pair.a + pair.b;",
        "export const add = tool<Pair>({",
        '  name: "add", description: "Add two numbers",',
        '  parameters: { a: { type: "number" }, b: { type: "number" } },',
        "  run: (args: Pair) => sum(args),",
        "});",
      ].join("\n"),
    });
    const { tool, entry } = registry.resolveTool("calc.tools:add");
    expect(tool).toBeInstanceOf(FunctionTool);
    expect(entry).toMatchObject({ kind: "code", packageName: "calc", name: "add", file: path.join(dir, "tools", "add.ts") });
    expect(tool.source?.file).toBe(path.join(dir, "tools", "add.ts"));
    expect((await call(tool, { a: 2, b: 3 })).result).toBe(5);
    expect(tool.toTool().function.parameters.required).toEqual(["a", "b"]);
  });

  it("loads .mjs and .js files (ESM syntax, in a folder without package.json)", async () => {
    const { registry } = await loadPackage({
      "tools/upper.mjs": 'import { tool } from "lllm";\nexport const upper = tool({ name: "upper", description: "Upper-case", parameters: { s: { type: "string" } }, run: ({ s }) => s.toUpperCase() });\n',
      "tools/lower.js": 'import { tool } from "lllm";\nexport default tool({ name: "lower", description: "Lower-case", parameters: { s: { type: "string" } }, run: ({ s }) => s.toLowerCase() });\n',
    });
    expect((await call(registry.resolveTool("upper").tool, { s: "Hi" })).result).toBe("HI");
    expect((await call(registry.resolveTool("lower").tool, { s: "Hi" })).result).toBe("hi");
    expect(registry.resolveTool("upper").entry?.kind).toBe("code");
  });

  it("accepts a plain { name, description, parameters, run } export, with no import at all", async () => {
    const { registry } = await loadPackage({
      "tools/plain.ts": 'export const greet = { name: "greet", description: "Greet someone", parameters: { who: { type: "string" } }, run: ({ who }: { who: string }) => `hello ${who}` };\n',
    });
    const { tool } = registry.resolveTool("greet");
    expect(tool).toBeInstanceOf(FunctionTool);
    expect((await call(tool, { who: "Ada" })).result).toBe("hello Ada");
  });

  it("takes a zod schema made with `import { z } from \"lllm\"` and from \"zod\"", async () => {
    const { registry } = await loadPackage({
      "tools/draw.ts": [
        'import { tool, z } from "lllm";',
        "export const draw = tool({",
        '  name: "draw", description: "Draw",',
        '  parameters: z.object({ points: z.array(z.object({ x: z.number(), y: z.number() })), color: z.enum(["red", "blue"]) }),',
        "  run: ({ points, color }) => `${(points as unknown[]).length} ${String(color)}`,",
        "});",
      ].join("\n"),
      "tools/count.ts": [
        'import { tool } from "lllm";',
        'import { z } from "zod";',
        'export default tool({ name: "count", description: "Count", parameters: z.object({ n: z.number().int() }), run: ({ n }) => Number(n) + 1 });',
      ].join("\n"),
    });
    const draw = registry.resolveTool("draw").tool;
    expect(draw.properties.color).toMatchObject({ enum: ["red", "blue"] });
    expect(draw.required).toEqual(["points", "color"]);
    expect((await call(draw, { points: [{ x: 1, y: 2 }], color: "red" })).result).toBe("1 red");
    expect((await call(draw, { points: [], color: "green" })).error).toMatch(/Invalid arguments for draw/);
    const count = registry.resolveTool("count").tool;
    expect(count.properties.n).toMatchObject({ type: "integer" });
    expect((await call(count, { n: 4 })).result).toBe(5);
  });

  it("ignores helper exports, and counts `export default x` + `export { x }` as one tool", async () => {
    const { registry } = await loadPackage({
      "tools/mixed.ts": [
        'import { tool } from "lllm";',
        "export const VERSION = 3;",
        "export function helper(value: string): string { return value.trim(); }",
        'export const settings = { name: "not a tool: no run" };',
        'export const echo = tool({ name: "echo", description: "Echo", parameters: { s: { type: "string" } }, run: ({ s }) => helper(String(s)) });',
        "export default echo;",
      ].join("\n"),
    });
    expect(registry.listTools().map((entry) => entry.name)).toEqual(["echo"]);
    expect((await call(registry.resolveTool("echo").tool, { s: "  x " })).result).toBe("x");
  });

  it("loads an array of tools exported from one file", async () => {
    const { registry } = await loadPackage({
      "tools/many.ts": 'import { tool } from "lllm";\nexport const all = [1, 2].map((n) => tool({ name: `t${n}`, description: "t", run: () => n }));\n',
    });
    expect(registry.listTools().map((entry) => entry.name)).toEqual(["t1", "t2"]);
  });

  it("skips `_private` files, dotfiles, test files, .d.ts files and sub-folders of tools/", async () => {
    const { registry } = await loadPackage({
      "tools/kept.ts": toolFile("kept"),
      "tools/_private.ts": 'throw new Error("must not be imported");\n',
      "tools/.hidden.ts": 'throw new Error("must not be imported");\n',
      "tools/kept.test.ts": 'throw new Error("must not be imported");\n',
      "tools/types.d.ts": "export declare const x: number;\n",
      "tools/lib/helper.ts": 'throw new Error("must not be imported");\n',
      "tools/lib/nested.ts": toolFile("nested"),
      "tools/notes.md": "# not a tool\n",
    });
    expect(registry.listTools().map((entry) => entry.name)).toEqual(["kept"]);
  });

  it("lets a tool file import its helpers from a skipped sub-folder", async () => {
    const { registry } = await loadPackage({
      "tools/lib/format.ts": "export const wrap = (text: string): string => `[${text}]`;\n",
      "tools/wrap.ts": 'import { tool } from "lllm";\nimport { wrap } from "./lib/format.js";\nexport default tool({ name: "wrap", description: "Wrap", parameters: { s: { type: "string" } }, run: ({ s }) => wrap(String(s)) });\n',
    });
    expect((await call(registry.resolveTool("wrap").tool, { s: "a" })).result).toBe("[a]");
  });

  it("reports a tool file that throws on import with the file and the line", async () => {
    const { error, dir } = await loadPackageError({
      "tools/ok.ts": toolFile("ok"),
      "tools/broken.ts": ['import { tool } from "lllm";', "const limit: number = 3;", "", 'throw new Error("no API key for broken");', "export default limit;"].join("\n"),
    });
    const file = path.join(dir, "tools", "broken.ts");
    expect(error.message).toContain("tool file failed to load: no API key for broken");
    expect(error.problems[0]!.location).toMatchObject({ file, line: 4 });
    expect(error.message).toContain(`${file}:4`);
  });

  it("reports a tool file with a syntax error, naming the file", async () => {
    const { error, dir } = await loadPackageError({ "tools/bad.ts": 'import { tool } from "lllm";\nexport const x = tool({ name: "x", \n' });
    expect(error.message).toContain("tool file failed to load");
    expect(error.problems[0]!.location?.file).toBe(path.join(dir, "tools", "bad.ts"));
  });

  it("reports an export that is meant as a tool but invalid", async () => {
    const { error, dir } = await loadPackageError({
      "tools/bad_name.ts": 'export const spaced = { name: "has space", description: "d", run: () => 1 };\n',
    });
    expect(error.message).toContain("has space");
    expect(error.problems[0]!.location?.file).toBe(path.join(dir, "tools", "bad_name.ts"));
  });

  it("rejects two implementations with one name in one package, naming both files", async () => {
    const { error } = await loadPackageError({ "tools/a.ts": toolFile("same", "a"), "tools/b.mjs": toolFile("same", "b") });
    expect(error.message).toContain("two tool implementations named `same`");
    expect(error.message).toContain("a.ts");
    expect(error.message).toContain("b.mjs");
  });

  it("rejects two declarations with one name in one package", async () => {
    const { error } = await loadPackageError({ "tools/a.yaml": declarationFile("same"), "tools/b.yml": declarationFile("same") });
    expect(error.message).toContain("two tool declarations named `same`");
  });

  it("rejects an implementation and a command tool with one name (both are implementations)", async () => {
    const { error } = await loadPackageError({ "tools/a.ts": toolFile("same"), "tools/a.yaml": 'name: same\ndescription: d\ncommand: [echo, hi]\n' });
    expect(error.message).toContain("two tool implementations named `same`");
  });

  it("allows a declaration and its implementation with one name in one package; the declaration owns the interface", async () => {
    const { registry } = await loadPackage({
      "lllm.yaml": "name: p\n",
      "tools/search.yaml": "name: search\ndescription: The declared description\nparameters:\n  q:\n    type: string\n",
      "tools/search.ts": 'import { tool } from "lllm";\nexport default tool({ name: "search", description: "impl", parameters: { q: { type: "string" }, limit: { type: "integer", default: 3 } }, run: ({ q }) => `found ${String(q)}` });\n',
    });
    const pkg = registry.packages.get("p")!;
    expect(pkg.tools().map((entry) => entry.kind)).toEqual(["declaration"]);
    const { tool, entry, ref } = registry.resolveTool("search");
    expect(ref).toBe("p.tools:search");
    expect(entry?.kind).toBe("declaration");
    expect(tool.description).toBe("The declared description");
    expect(Object.keys(tool.properties)).toEqual(["q"]);
    expect((await call(tool, { q: "cats" })).result).toBe("found cats");
  });

  it("reports a broken tool declaration with its file", async () => {
    const { error, dir } = await loadPackageError({ "tools/d.yaml": "name: d\ndescripton: typo\n" });
    expect(error.message).toContain("descripton");
    expect(error.problems.some((problem) => problem.location?.file === path.join(dir, "tools", "d.yaml"))).toBe(true);
  });

  it("one broken tool file does not disable the package: the rest loads, the broken file is listed", async () => {
    const { registry, dir } = await loadPackage({
      "lllm.yaml": "name: p\n",
      "tools/good.ts": toolFile("good"),
      "tools/bad.ts": 'import { tool } from "lllm";\nexport const x = tool({ name: "x", \n',
      "tools/worse.yaml": "name: worse\ndescripton: typo\n",
    });
    expect(registry.listTools().map((entry) => entry.name)).toEqual(["good"]);
    expect((await call(registry.resolveTool("good").tool, { q: "a" })).result).toBe("good:good");
    expect([...new Set(registry.brokenFiles().map((problem) => path.basename(problem.location!.file)))]).toEqual(["bad.ts", "worse.yaml"]);
    expect(registry.brokenFiles()[0]!.message).toMatch(/^tool file failed to load: /);
    // A run that asks for a tool of the broken file is told which file did not load, not only "not found".
    let missing: unknown;
    try {
      registry.resolveTool("x");
    } catch (error) {
      missing = error;
    }
    expect(missing).toBeInstanceOf(ConfigError);
    expect((missing as ConfigError).hint).toContain(`${path.join(dir, "tools", "bad.ts")}:`);
    expect((missing as ConfigError).hint).toContain("did not load");
  });

  it.each([
    ["an export that is a number", "export default 5;\n", "tool file defines no tool: its exports are `default` (number)"],
    ["no export at all", "const helper = 1;\nvoid helper;\n", "it has no exports"],
    ["a tool-shaped object with a bad name", "export default { name: 5, run: 7 };\n", "export `default` is not a valid tool: a tool needs a `name` (a string), got 5"],
    ["a tool-shaped object with a bad run", 'export const t = { name: "t", description: "d", run: 7 };\n', "`run` must be a function, got number"],
  ])("says which file and why when a tool file has %s", async (_what, text, expected) => {
    const { registry, dir } = await loadPackage({ "tools/good.ts": toolFile("good"), "tools/odd.ts": text });
    expect(registry.listTools().map((entry) => entry.name)).toEqual(["good"]);
    const [problem] = registry.brokenFiles();
    expect(problem?.location?.file).toBe(path.join(dir, "tools", "odd.ts"));
    expect(problem?.message).toContain(expected);
  });
});
