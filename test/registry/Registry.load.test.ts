import { symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { Registry, type RegistryOptions } from "../../src/registry/index.js";
import { FunctionCall } from "../../src/tools/index.js";
import { tempTree, toolFile } from "./fixtures/tree.js";

/** Load with discovery pointed at empty temp folders, so the developer's ~/.lllm and cwd never leak in. */
async function load(options: RegistryOptions): Promise<Registry> {
  const empty = tempTree();
  return Registry.load({ cwd: empty, home: empty, ...options });
}

async function loadError(options: RegistryOptions): Promise<ConfigError> {
  const error = await load(options).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

async function callText(registry: Registry, ref: string): Promise<string | undefined> {
  const { tool } = registry.resolveTool(ref);
  return (await tool.call(new FunctionCall({ name: tool.name, arguments: { q: "x" } }))).result as string | undefined;
}

describe("Registry.load: dependencies", () => {
  it("loads a dependency under its alias and resolves `alias.tools:x`", async () => {
    const root = tempTree({
      "app/lllm.toml": '[package]\nname = "app"\n[dependencies]\npackages = ["../lib as helpers"]\n',
      "lib/lllm.yaml": "name: library\n",
      "lib/tools/shout.ts": toolFile("shout"),
    });
    const registry = await load({ packages: [path.join(root, "app")] });
    expect(registry.list().map((pkg) => pkg.name)).toEqual(["app", "library"]);
    expect([...registry.packages.keys()].sort()).toEqual(["app", "helpers", "library"]);
    expect(registry.packages.get("helpers")).toBe(registry.packages.get("library"));
    expect(registry.packages.get("app")!.dependencies.get("helpers")?.name).toBe("library");
    expect(registry.resolveTool("helpers.tools:shout").ref).toBe("library.tools:shout");
    expect(await callText(registry, "helpers.tools:shout")).toBe("shout:shout");
    expect(await callText(registry, "library.tools:shout")).toBe("shout:shout");
  });

  it("loads `{path, alias}` dependencies, and ones without an alias by their own name", async () => {
    const root = tempTree({
      "app/lllm.toml": '[package]\nname = "app"\n[dependencies]\npackages = [{ path = "../one", alias = "uno" }, "../two"]\n',
      "one/tools/a.ts": toolFile("a"),
      "two/tools/b.ts": toolFile("b"),
    });
    const registry = await load({ packages: [path.join(root, "app")] });
    expect(await callText(registry, "uno.tools:a")).toBe("a:a");
    expect(await callText(registry, "two.tools:b")).toBe("b:b");
    expect([...registry.packages.get("app")!.dependencies.keys()]).toEqual(["uno", "two"]);
  });

  it("loads a folder reached twice (listed, and as a dependency, and through a symlink) once", async () => {
    const root = tempTree({
      "app/lllm.yaml": "name: app\ndependencies: [../shared as s]\n",
      "other/lllm.yaml": "name: other\ndependencies: [../shared]\n",
      "shared/tools/t.ts": toolFile("t"),
    });
    symlinkSync(path.join(root, "shared"), path.join(root, "shared-link"));
    const registry = await load({ packages: [path.join(root, "shared-link"), path.join(root, "app"), path.join(root, "other")] });
    expect(registry.list().map((pkg) => pkg.name)).toEqual(["shared", "app", "other"]);
    const shared = registry.packages.get("shared");
    expect(registry.packages.get("s")).toBe(shared);
    expect(registry.packages.get("other")!.dependencies.get("shared")).toBe(shared);
    // One package means one implementation: the bare name is not ambiguous.
    expect(registry.resolveTool("t").ref).toBe("shared.tools:t");
  });

  it("reports a dependency cycle by package names", async () => {
    const root = tempTree({
      "a/lllm.yaml": "name: a\ndependencies: [../b]\n",
      "b/lllm.yaml": "name: b\ndependencies: [../a]\n",
    });
    const error = await loadError({ packages: [path.join(root, "a")] });
    expect(error.message).toContain("dependency cycle: a -> b -> a");
    expect(error.problems[0]!.location?.file).toBe(path.join(root, "b", "lllm.yaml"));
  });

  it("names packages, not folders, in the cycle, and catches a package depending on itself", async () => {
    const root = tempTree({
      "folder_x/lllm.yaml": "name: x\ndependencies: [../folder_y]\n",
      "folder_y/lllm.yaml": "name: y\ndependencies: [../folder_z]\n",
      "folder_z/lllm.yaml": "name: z\ndependencies: [../folder_y]\n",
      "self/lllm.yaml": "name: self\ndependencies: [.]\n",
    });
    expect((await loadError({ packages: [path.join(root, "folder_x")] })).message).toContain("dependency cycle: x -> y -> z -> y");
    expect((await loadError({ packages: [path.join(root, "self")] })).message).toContain("dependency cycle: self -> self");
  });

  it("reports a missing dependency folder where it is declared", async () => {
    const root = tempTree({ "app/lllm.toml": '[dependencies]\npackages = ["../nowhere as n"]\n' });
    const error = await loadError({ packages: [path.join(root, "app")] });
    expect(error.message).toContain("does not exist");
    expect(error.message).toContain("nowhere");
    expect(error.problems[0]!.location?.file).toBe(path.join(root, "app", "lllm.toml"));
  });

  it("reports a missing explicit package folder with the location it was named at", async () => {
    const root = tempTree();
    const error = await loadError({ packages: [{ dir: path.join(root, "missing"), location: { file: "tactic.yaml", line: 4 } }] });
    expect(error.message).toContain("tactic.yaml:4");
    expect(error.message).toContain("missing");
  });

  it("rejects two different folders with one package name", async () => {
    const root = tempTree({ "one/lllm.yaml": "name: dup\n", "two/lllm.yaml": "name: dup\n" });
    const error = await loadError({ packages: [path.join(root, "one"), path.join(root, "two")] });
    expect(error.message).toContain("two packages are named `dup`");
  });

  it("rejects an alias that is another package's name", async () => {
    const root = tempTree({
      "app/lllm.yaml": "name: app\ndependencies: [../lib as other]\n",
      "lib/lllm.yaml": "name: lib\n",
      "other/lllm.yaml": "name: other\n",
    });
    const error = await loadError({ packages: [path.join(root, "other"), path.join(root, "app")] });
    expect(error.message).toContain("alias `other` is already the name of package");
  });

  it("reports a broken manifest of a dependency with its file", async () => {
    const root = tempTree({ "app/lllm.yaml": "name: app\ndependencies: [../lib]\n", "lib/lllm.yaml": "name: lib\nnmae: x\n" });
    const error = await loadError({ packages: [path.join(root, "app")] });
    expect(error.message).toContain("unknown key `nmae`");
    expect(error.message).toContain(path.join(root, "lib", "lllm.yaml"));
  });
});

describe("Registry.load: discovery", () => {
  it("discovers <cwd>/lllm_packages/* and <home>/packages/*", async () => {
    const cwd = tempTree({ "lllm_packages/local/tools/l.ts": toolFile("l"), "lllm_packages/.hidden/tools/h.ts": toolFile("h"), "lllm_packages/README.md": "not a package" });
    const home = tempTree({ "packages/global/lllm.yaml": "name: global_pkg\n", "packages/global/tools/g.ts": toolFile("g") });
    const registry = await Registry.load({ cwd, home });
    expect(registry.list().map((pkg) => pkg.name)).toEqual(["local", "global_pkg"]);
    expect(await callText(registry, "local.tools:l")).toBe("l:l");
    expect(await callText(registry, "global_pkg.tools:g")).toBe("g:g");
  });

  it("does not discover when discover is false", async () => {
    const cwd = tempTree({ "lllm_packages/local/tools/l.ts": toolFile("l") });
    const registry = await Registry.load({ cwd, home: cwd, discover: false });
    expect(registry.list()).toEqual([]);
  });

  it("lets an explicit package shadow a discovered one with the same name", async () => {
    const explicit = tempTree({ "mine/lllm.yaml": "name: weather\n", "mine/tools/w.ts": toolFile("w", "explicit") });
    const cwd = tempTree({ "lllm_packages/weather/tools/w.ts": toolFile("w", "discovered") });
    const home = tempTree({ "packages/weather/tools/w.ts": toolFile("w", "home") });
    const registry = await Registry.load({ packages: [path.join(explicit, "mine")], cwd, home });
    expect(registry.list()).toHaveLength(1);
    expect(registry.packages.get("weather")!.dir).toBe(path.join(explicit, "mine"));
    expect(await callText(registry, "weather.tools:w")).toBe("w:explicit");
    expect(await callText(registry, "w")).toBe("w:explicit");
  });

  it("prefers ./lllm_packages over $LLLM_HOME/packages for one name", async () => {
    const cwd = tempTree({ "lllm_packages/weather/tools/w.ts": toolFile("w", "local") });
    const home = tempTree({ "packages/weather/tools/w.ts": toolFile("w", "home") });
    const registry = await Registry.load({ cwd, home });
    expect(registry.list()).toHaveLength(1);
    expect(await callText(registry, "weather.tools:w")).toBe("w:local");
  });

  it("discovers once: a second add() with new explicit packages does not rescan", async () => {
    const cwd = tempTree({ "lllm_packages/found/lllm.yaml": "name: found\n" });
    const more = tempTree({ "extra/lllm.yaml": "name: extra\n" });
    const registry = await Registry.load({ cwd, home: cwd });
    await registry.add({ packages: [path.join(more, "extra")], cwd, home: cwd });
    expect(registry.list().map((pkg) => pkg.name)).toEqual(["found", "extra"]);
  });
});

describe("Registry.load: a project's own folder", () => {
  it("a manifest read as the folder's package and as the project's dependency list tells its problem once", async () => {
    const root = tempTree({ "app/lllm.toml": '[package]\nname = "app"\nbad key\n', "app/tools/a.ts": toolFile("a") });
    const error = await loadError({ packages: [path.join(root, "app")], cwd: path.join(root, "app"), home: root });
    expect(error.problemCount).toBe(1);
    expect(error.message).toMatch(/^.*lllm\.toml:3:5: cannot parse the package manifest/);
  });
});
