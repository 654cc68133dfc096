import { symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, ToolError } from "../../src/errors.js";
import { Registry } from "../../src/registry/index.js";
import { FunctionCall, tool, type FunctionTool } from "../../src/tools/index.js";
import { declarationFile, tempTree, toolFile } from "./fixtures/tree.js";

async function loadTree(files: Record<string, string>, packages: string[]): Promise<{ registry: Registry; root: string }> {
  const root = tempTree(files);
  const registry = await Registry.load({ packages: packages.map((dir) => path.join(root, dir)), cwd: root, home: root });
  return { registry, root };
}

async function result(resolved: { tool: FunctionTool }): Promise<unknown> {
  const done = await resolved.tool.call(new FunctionCall({ name: resolved.tool.name, arguments: { q: "x" } }));
  if (done.error !== undefined) throw new Error(done.error);
  return done.result;
}

function thrown(action: () => unknown): ConfigError {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  return caught as ConfigError;
}

const runtimeDup = tool({ name: "dup", description: "runtime", parameters: { q: { type: "string" } }, run: () => "dup:runtime" });

/** alpha and beta both implement `dup`; gamma has `unique`; app depends on alpha under the alias `al`. */
const THREE = {
  "alpha/tools/dup.ts": toolFile("dup", "alpha"),
  "alpha/tools/get_weather.ts": toolFile("get_weather"),
  "beta/tools/dup.ts": toolFile("dup", "beta"),
  "gamma/tools/unique.ts": toolFile("unique"),
  "app/lllm.yaml": "name: app\ndependencies: [../alpha as al]\n",
};
const THREE_PACKAGES = ["app", "beta", "gamma"];

describe("resolveTool: bare names", () => {
  it("resolves a bare name found in exactly one package", async () => {
    const { registry } = await loadTree(THREE, THREE_PACKAGES);
    const resolved = registry.resolveTool("unique");
    expect(resolved.ref).toBe("gamma.tools:unique");
    expect(await result(resolved)).toBe("unique:unique");
  });

  it("rejects an ambiguous bare name, listing every candidate", async () => {
    const { registry } = await loadTree(THREE, THREE_PACKAGES);
    const error = thrown(() => registry.resolveTool("dup", { where: { file: "tactic.yaml", line: 3 } }));
    expect(error.code).toBe("ref_ambiguous");
    expect(error.message).toContain("`alpha.tools:dup`");
    expect(error.message).toContain("`beta.tools:dup`");
    expect(error.location).toEqual({ file: "tactic.yaml", line: 3 });
    expect(error.hint).toMatch(/full ref/);
  });

  it("looks in the referring package first (by name or alias)", async () => {
    const { registry } = await loadTree(THREE, THREE_PACKAGES);
    expect(await result(registry.resolveTool("dup", { from: "beta" }))).toBe("dup:beta");
    expect(await result(registry.resolveTool("dup", { from: "alpha" }))).toBe("dup:alpha");
    expect(await result(registry.resolveTool("dup", { from: "al" }))).toBe("dup:alpha");
    // A referring package without the name falls through to the others.
    expect(registry.resolveTool("unique", { from: "beta" }).ref).toBe("gamma.tools:unique");
  });

  it("looks at runtime registrations after the referring package and before the other packages", async () => {
    const { registry } = await loadTree(THREE, THREE_PACKAGES);
    registry.registerTool("dup", runtimeDup);
    expect(await result(registry.resolveTool("dup"))).toBe("dup:runtime");
    expect(await result(registry.resolveTool("dup", { from: "gamma" }))).toBe("dup:runtime");
    expect(await result(registry.resolveTool("dup", { from: "beta" }))).toBe("dup:beta");
    expect(registry.runtime.get("dup")).toBe(runtimeDup);
  });

  it("accepts a plain object at registerTool and rejects what is not a tool", async () => {
    const registry = await Registry.load({ discover: false });
    registry.registerTool("plain", { name: "plain", description: "p", parameters: { q: { type: "string" } }, run: () => "plain!" });
    expect(await result(registry.resolveTool("plain"))).toBe("plain!");
    const error = thrown(() => registry.registerTool("nope", { hello: 1 }));
    expect(error.code).toBe("tool_invalid");
    expect(error.message).toContain("nope");
  });

  it("names a missing bare name, where it was used, and the closest refs", async () => {
    const { registry } = await loadTree(THREE, THREE_PACKAGES);
    const error = thrown(() => registry.resolveTool("get_wether", { where: { file: "/x/tactic.yaml", line: 12, column: 5 } }));
    expect(error.code).toBe("tool_not_found");
    expect(error.message).toContain("`get_wether`");
    expect(error.location).toEqual({ file: "/x/tactic.yaml", line: 12, column: 5 });
    expect(error.problems[0]!.location).toEqual({ file: "/x/tactic.yaml", line: 12, column: 5 });
    expect(error.hint).toContain("`alpha.tools:get_weather`");
    expect(error.hint).not.toContain("unique");
  });

  it("suggests runtime registrations for a missing name too", async () => {
    const registry = await Registry.load({ discover: false });
    registry.registerTool("lookup_stock", tool({ name: "lookup_stock", description: "d", run: () => 1 }));
    expect(thrown(() => registry.resolveTool("lookup_stok")).hint).toContain("`lookup_stock`");
  });

  it("says when no tools are loaded at all", async () => {
    const registry = await Registry.load({ discover: false });
    expect(thrown(() => registry.resolveTool("anything")).hint).toMatch(/No tools are loaded/);
  });
});

describe("resolveTool: qualified refs", () => {
  it("resolves `pkg.tools:key` by name and by alias", async () => {
    const { registry } = await loadTree(THREE, THREE_PACKAGES);
    expect(await result(registry.resolveTool("beta.tools:dup"))).toBe("dup:beta");
    expect(await result(registry.resolveTool("al.tools:dup"))).toBe("dup:alpha");
    expect(registry.resolveTool("al.tools:dup").ref).toBe("alpha.tools:dup");
  });

  it("ignores runtime registrations for a qualified ref", async () => {
    const { registry } = await loadTree(THREE, THREE_PACKAGES);
    registry.registerTool("dup", runtimeDup);
    expect(await result(registry.resolveTool("alpha.tools:dup"))).toBe("dup:alpha");
  });

  it("reports a missing key in a known package, with the package and the closest refs", async () => {
    const { registry } = await loadTree(THREE, THREE_PACKAGES);
    const error = thrown(() => registry.resolveTool("alpha.tools:get_wether", { where: { file: "t.yaml", line: 2 } }));
    expect(error.code).toBe("tool_not_found");
    expect(error.message).toContain("`alpha.tools:get_wether` not found in package `alpha`");
    expect(error.hint).toContain("`alpha.tools:get_weather`");
    expect(error.location).toEqual({ file: "t.yaml", line: 2 });
  });

  it("reports an unknown package with did-you-mean and the loaded packages", async () => {
    const { registry } = await loadTree(THREE, THREE_PACKAGES);
    const error = thrown(() => registry.resolveTool("alpah.tools:dup", { where: { file: "t.yaml", line: 9 } }));
    expect(error.code).toBe("package_not_found");
    expect(error.message).toContain("no package named `alpah`");
    expect(error.hint).toContain("did you mean `alpha`");
    expect(error.hint).toContain("gamma");
    expect(error.location).toEqual({ file: "t.yaml", line: 9 });
  });

  it("rejects a ref to another section and text that is not a ref", async () => {
    const { registry } = await loadTree(THREE, THREE_PACKAGES);
    const section = thrown(() => registry.resolveTool("alpha.prompts:dup", { where: { file: "t.yaml", line: 1 } }));
    expect(section.code).toBe("ref_section");
    expect(section.message).toContain("prompts");
    expect(section.location).toEqual({ file: "t.yaml", line: 1 });
    const invalid = thrown(() => registry.resolveTool("alpha.tool:dup", { where: { file: "t.yaml", line: 5 } }));
    expect(invalid.code).toBe("ref_invalid");
    expect(invalid.message).toContain("`alpha.tool:dup` is not a valid tool ref");
    expect(invalid.location).toEqual({ file: "t.yaml", line: 5 });
  });
});

describe("resolveTool: declarations bind by exact name", () => {
  it("binds to the implementation in its own package before runtime and other packages", async () => {
    const { registry } = await loadTree(
      { "a/tools/web_search.yaml": declarationFile("web_search"), "a/tools/impl.ts": toolFile("web_search", "own"), "b/tools/web_search.ts": toolFile("web_search", "other") },
      ["a", "b"],
    );
    registry.registerTool("web_search", tool({ name: "web_search", description: "r", parameters: { q: { type: "string" } }, run: () => "runtime" }));
    expect(await result(registry.resolveTool("a.tools:web_search"))).toBe("web_search:own");
  });

  it("binds to a runtime registration before another package's implementation", async () => {
    const { registry } = await loadTree({ "a/tools/web_search.yaml": declarationFile("web_search"), "b/tools/web_search.ts": toolFile("web_search", "other") }, ["a", "b"]);
    registry.registerTool("web_search", tool({ name: "web_search", description: "r", parameters: { q: { type: "string" } }, run: () => "runtime" }));
    const resolved = registry.resolveTool("a.tools:web_search");
    expect(resolved.entry?.kind).toBe("declaration");
    expect(resolved.tool.description).toBe("declared");
    expect(await result(resolved)).toBe("runtime");
  });

  it("binds to a unique implementation in another package; the bare name picks the declaration, not an ambiguity", async () => {
    const { registry } = await loadTree({ "a/tools/web_search.yaml": declarationFile("web_search", "the interface"), "b/tools/web_search.ts": toolFile("web_search", "other") }, ["a", "b"]);
    expect(await result(registry.resolveTool("a.tools:web_search"))).toBe("web_search:other");
    const bare = registry.resolveTool("web_search");
    expect(bare.ref).toBe("a.tools:web_search");
    expect(bare.tool.description).toBe("the interface");
    expect(await result(bare)).toBe("web_search:other");
    // The implementation itself stays reachable by its own ref.
    expect(registry.resolveTool("b.tools:web_search").entry?.kind).toBe("code");
  });

  it("binds by exact name only", async () => {
    const { registry } = await loadTree({ "a/tools/web_search.yaml": declarationFile("web_search"), "b/tools/websearch.ts": toolFile("websearch"), "b/tools/Web_search.ts": toolFile("Web_search") }, ["a", "b"]);
    const resolved = registry.resolveTool("a.tools:web_search");
    expect(resolved.tool.isDeclaration).toBe(true);
  });

  it("rejects a declaration that several other packages implement", async () => {
    const { registry } = await loadTree(
      { "a/tools/web_search.yaml": declarationFile("web_search"), "b/tools/w.ts": toolFile("web_search", "b"), "c/tools/w.ts": toolFile("web_search", "c") },
      ["a", "b", "c"],
    );
    const error = thrown(() => registry.resolveTool("a.tools:web_search"));
    expect(error.code).toBe("tool_ambiguous_implementation");
    expect(error.message).toContain("`b.tools:web_search`");
    expect(error.message).toContain("`c.tools:web_search`");
  });

  it("returns an unbound declaration that fails clearly when called", async () => {
    const { registry, root } = await loadTree({ "a/tools/web_search.yaml": declarationFile("web_search") }, ["a"]);
    const resolved = registry.resolveTool("web_search");
    expect(resolved.tool.isDeclaration).toBe(true);
    const failure = await resolved.tool.call(new FunctionCall({ name: "web_search", arguments: { q: "x" } })).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ToolError);
    expect((failure as ToolError).code).toBe("tool_not_bound");
    expect((failure as ToolError).message).toContain(path.join(root, "a", "tools", "web_search.yaml"));
  });

  it("rejects a bare name declared in two packages", async () => {
    const { registry } = await loadTree({ "a/tools/w.yaml": declarationFile("web_search"), "b/tools/w.yaml": declarationFile("web_search"), "c/tools/w.ts": toolFile("web_search") }, ["a", "b", "c"]);
    const error = thrown(() => registry.resolveTool("web_search"));
    expect(error.code).toBe("ref_ambiguous");
    expect(error.message).toContain("`a.tools:web_search`");
    expect(error.message).toContain("`b.tools:web_search`");
  });
});

describe("resolveEntry: prompts, tactics and proxies by file stem", () => {
  const FILES = {
    "weather/prompts/system.md": "You are a weather bot.",
    "weather/prompts/user.yaml": "text: hi",
    "weather/prompts/notes.txt": "notes",
    "weather/prompts/_draft.md": "skipped",
    "weather/prompts/image.png": "skipped",
    "weather/tactics/review.yaml": "name: review",
    "weather/tactics/custom.ts": "export default {};",
    "weather/proxies/fmp.yaml": "name: fmp",
    "weather/proxies/cls.ts": "export default {};",
    "other/prompts/system.md": "other system",
    "other/tactics/only_other.json": "{}",
  };

  it("indexes each section by file stem, skipping private and foreign files", async () => {
    const { registry } = await loadTree(FILES, ["weather", "other"]);
    const weather = registry.packages.get("weather")!;
    expect([...weather.prompts.keys()].sort()).toEqual(["notes", "system", "user"]);
    expect([...weather.tactics.keys()].sort()).toEqual(["custom", "review"]);
    expect([...weather.proxies.keys()].sort()).toEqual(["cls", "fmp"]);
  });

  it("resolves qualified refs to files", async () => {
    const { registry, root } = await loadTree(FILES, ["weather", "other"]);
    expect(registry.resolveEntry("prompts", "weather.prompts:system")).toEqual({ ref: "weather.prompts:system", key: "system", packageName: "weather", file: path.join(root, "weather", "prompts", "system.md") });
    expect(registry.resolveEntry("tactics", "weather.tactics:review").file).toBe(path.join(root, "weather", "tactics", "review.yaml"));
    expect(registry.resolveEntry("proxies", "weather.proxies:fmp").file).toBe(path.join(root, "weather", "proxies", "fmp.yaml"));
    expect(registry.resolveEntry("prompts", "other.prompts:system").file).toBe(path.join(root, "other", "prompts", "system.md"));
  });

  it("resolves bare names: referring package first, then a unique match; ambiguous otherwise", async () => {
    const { registry, root } = await loadTree(FILES, ["weather", "other"]);
    expect(registry.resolveEntry("tactics", "only_other").file).toBe(path.join(root, "other", "tactics", "only_other.json"));
    expect(registry.resolveEntry("prompts", "system", { from: "other" }).packageName).toBe("other");
    expect(registry.resolveEntry("prompts", "system", { from: "weather" }).packageName).toBe("weather");
    const error = thrown(() => registry.resolveEntry("prompts", "system", { where: { file: "t.yaml", line: 8 } }));
    expect(error.code).toBe("ref_ambiguous");
    expect(error.message).toContain("prompt name `system` is ambiguous: `weather.prompts:system`, `other.prompts:system`");
    expect(error.location).toEqual({ file: "t.yaml", line: 8 });
  });

  it("reports a missing entry with the closest refs and where it was used", async () => {
    const { registry } = await loadTree(FILES, ["weather", "other"]);
    const error = thrown(() => registry.resolveEntry("prompts", "weather.prompts:sytem", { where: { file: "t.yaml", line: 4 } }));
    expect(error.code).toBe("prompt_not_found");
    expect(error.message).toContain("`weather.prompts:sytem` not found in package `weather`");
    expect(error.hint).toContain("`weather.prompts:system`");
    expect(error.location).toEqual({ file: "t.yaml", line: 4 });
    expect(thrown(() => registry.resolveEntry("proxies", "fmq")).code).toBe("proxy_not_found");
    expect(thrown(() => registry.resolveEntry("proxies", "fmq")).hint).toContain("`weather.proxies:fmp`");
    expect(thrown(() => registry.resolveEntry("tactics", "weather.tools:review")).code).toBe("ref_section");
  });

  it("rejects two files with one stem in one section", async () => {
    const root = tempTree({ "p/prompts/system.md": "a", "p/prompts/system.txt": "b" });
    const error = await Registry.load({ packages: [path.join(root, "p")], discover: false }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain("two prompts named `system`");
  });
});

describe("packageOfFile", () => {
  it("finds the package a file lies in, and nothing for a file outside every package", async () => {
    const { registry, root } = await loadTree({ "weather/tactics/t.yaml": "", "weather2/tactics/t.yaml": "", "loose/t.yaml": "" }, ["weather", "weather2"]);
    expect(registry.packageOfFile(path.join(root, "weather", "tactics", "t.yaml"))?.name).toBe("weather");
    expect(registry.packageOfFile(path.join(root, "weather2", "tactics", "t.yaml"))?.name).toBe("weather2");
    expect(registry.packageOfFile(path.join(root, "loose", "t.yaml"))).toBeUndefined();
    expect(registry.packageOfFile(path.join(root, "weather"))).toBeUndefined();
  });

  it("picks the innermost package when one package folder lies inside another", async () => {
    const { registry, root } = await loadTree(
      { "project/lllm.yaml": "name: project\n", "project/tactics/main.yaml": "", "project/lllm_packages/inner/tactics/t.yaml": "" },
      ["project", "project/lllm_packages/inner"],
    );
    expect(registry.packageOfFile(path.join(root, "project", "tactics", "main.yaml"))?.name).toBe("project");
    expect(registry.packageOfFile(path.join(root, "project", "lllm_packages", "inner", "tactics", "t.yaml"))?.name).toBe("inner");
  });

  it("finds the package of a file reached through a symlinked folder", async () => {
    const { registry, root } = await loadTree({ "real/tactics/t.yaml": "" }, ["real"]);
    symlinkSync(path.join(root, "real"), path.join(root, "link"));
    expect(registry.packageOfFile(path.join(root, "link", "tactics", "t.yaml"))?.name).toBe("real");
  });
});
