import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { readManifest } from "../../src/registry/index.js";
import { tempTree } from "./fixtures/tree.js";

/** The ConfigError `readManifest` throws for `dir` (fails the test when it does not throw one). */
async function manifestError(dir: string): Promise<ConfigError> {
  const error = await readManifest(dir).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe("readManifest: formats", () => {
  it("reads LLLM's sectioned lllm.toml, with `path as alias` dependencies", async () => {
    const dir = tempTree({
      "weather/lllm.toml": ['[package]', 'name = "wx"', 'version = "0.1.0"', 'description = "Weather tools"', "", "[dependencies]", 'packages = ["../search as search", "../plain"]', ""].join("\n"),
    });
    const manifest = await readManifest(path.join(dir, "weather"));
    expect(manifest).toMatchObject({ name: "wx", version: "0.1.0", description: "Weather tools", file: path.join(dir, "weather", "lllm.toml"), dir: path.join(dir, "weather") });
    expect(manifest.dependencies.map(({ path: dependencyPath, alias }) => ({ path: dependencyPath, alias }))).toEqual([
      { path: "../search", alias: "search" },
      { path: "../plain", alias: undefined },
    ]);
    expect(manifest.dependencies[0]!.location.file).toBe(path.join(dir, "weather", "lllm.toml"));
  });

  it("reads `{path, alias}` tables in the toml dependency list, mixed with strings", async () => {
    const dir = tempTree({
      "lllm.toml": ['[package]', 'name = "p"', "[dependencies]", 'packages = [{ path = "../b", alias = "bee" }, { path = "../c" }, "../d as dee"]', ""].join("\n"),
    });
    const manifest = await readManifest(dir);
    expect(manifest.dependencies.map((dependency) => [dependency.path, dependency.alias])).toEqual([
      ["../b", "bee"],
      ["../c", undefined],
      ["../d", "dee"],
    ]);
  });

  it("reads a flat lllm.yaml", async () => {
    const dir = tempTree({ "lllm.yaml": "name: search\nversion: 0.2.0\ndescription: Search\ndependencies: [../x as ex]\n" });
    const manifest = await readManifest(dir);
    expect(manifest).toMatchObject({ name: "search", version: "0.2.0", description: "Search", file: path.join(dir, "lllm.yaml") });
    expect(manifest.dependencies.map((dependency) => [dependency.path, dependency.alias])).toEqual([["../x", "ex"]]);
  });

  it("reads lllm.yml too", async () => {
    const dir = tempTree({ "lllm.yml": "name: yml_pkg\n" });
    expect((await readManifest(dir)).name).toBe("yml_pkg");
  });

  it("reads the `lllm` key of package.json", async () => {
    const dir = tempTree({
      "package.json": JSON.stringify({ name: "npm-name", version: "9.9.9", lllm: { name: "from_lllm", version: "1.0.0", description: "d", dependencies: { packages: ["../x as ex"] } } }),
    });
    const manifest = await readManifest(dir);
    expect(manifest).toMatchObject({ name: "from_lllm", version: "1.0.0", description: "d", file: path.join(dir, "package.json") });
    expect(manifest.dependencies.map((dependency) => dependency.alias)).toEqual(["ex"]);
  });

  it("falls back to the folder name for a package.json without an `lllm` key", async () => {
    const dir = tempTree({ "plain_pkg/package.json": JSON.stringify({ name: "something-else", version: "1.0.0" }) });
    const manifest = await readManifest(path.join(dir, "plain_pkg"));
    expect(manifest.name).toBe("plain_pkg");
    expect(manifest.file).toBeUndefined();
    expect(manifest.version).toBeUndefined();
    expect(manifest.dependencies).toEqual([]);
  });

  it("does not reject a scoped npm name when package.json#lllm gives no name", async () => {
    const dir = tempTree({ "weather/package.json": JSON.stringify({ name: "@acme/weather", lllm: { description: "d" } }) });
    const manifest = await readManifest(path.join(dir, "weather"));
    expect(manifest.name).toBe("weather");
    expect(manifest.description).toBe("d");
  });

  it("uses the folder name without any manifest, or with an empty one", async () => {
    const dir = tempTree({ "bare/tools/.keep": "", "empty_toml/lllm.toml": "", "empty_yaml/lllm.yaml": "" });
    expect(await readManifest(path.join(dir, "bare"))).toEqual({ name: "bare", dependencies: [], dir: path.join(dir, "bare") });
    expect((await readManifest(path.join(dir, "empty_toml"))).name).toBe("empty_toml");
    expect((await readManifest(path.join(dir, "empty_yaml"))).name).toBe("empty_yaml");
  });

  it("prefers lllm.toml over lllm.yaml over package.json", async () => {
    const dir = tempTree({ "lllm.toml": '[package]\nname = "toml"\n', "lllm.yaml": "name: yaml\n", "package.json": JSON.stringify({ lllm: { name: "json" } }) });
    expect((await readManifest(dir)).name).toBe("toml");
  });
});

describe("readManifest: invalid manifests", () => {
  it("rejects an unknown top-level key with a did-you-mean and the file", async () => {
    const dir = tempTree({ "lllm.yaml": "name: p\ndependencys: [../x]\n" });
    const error = await manifestError(dir);
    expect(error.code).toBe("manifest_invalid");
    expect(error.message).toContain("unknown key `dependencys`");
    expect(error.message).toContain("did you mean `dependencies`?");
    expect(error.problems[0]!.location).toMatchObject({ file: path.join(dir, "lllm.yaml"), line: 2 });
    expect(error.message).toContain(path.join(dir, "lllm.yaml"));
  });

  it("rejects an unknown key in the toml [package] table", async () => {
    const dir = tempTree({ "lllm.toml": '[package]\nname = "p"\nversoin = "1"\n' });
    const error = await manifestError(dir);
    expect(error.message).toContain("unknown key `package.versoin`");
    expect(error.message).toContain("`version`");
    expect(error.problems[0]!.location).toEqual({ file: path.join(dir, "lllm.toml"), line: 3, column: 1 });
  });

  it("rejects an unknown key in the toml [dependencies] table instead of dropping the dependencies", async () => {
    const dir = tempTree({ "lllm.toml": '[package]\nname = "p"\n[dependencies]\npakages = ["../x"]\n' });
    const error = await manifestError(dir);
    expect(error.message).toContain("pakages");
    expect(error.message).toContain("`packages`");
    expect(error.problems[0]!.location).toEqual({ file: path.join(dir, "lllm.toml"), line: 4, column: 1 });
  });

  it("rejects a package name with a dot, saying why", async () => {
    const dir = tempTree({ "lllm.toml": '[package]\nname = "acme.weather"\n' });
    const error = await manifestError(dir);
    expect(error.message).toContain("package name `acme.weather` is not valid");
    expect(error.message).toMatch(/no dots/);
    expect(error.problems[0]!.location?.file).toBe(path.join(dir, "lllm.toml"));
  });

  it("rejects a folder name that is not a valid package name when no name is given", async () => {
    const dir = tempTree({ "my.pkg/lllm.yaml": "description: d\n" });
    const error = await manifestError(path.join(dir, "my.pkg"));
    expect(error.message).toContain("package name `my.pkg` is not valid");
  });

  it("rejects fields of the wrong type and bad dependency entries, all at once", async () => {
    const dir = tempTree({ "lllm.yaml": "name: p\nversion: 1.5\ndependencies:\n  - {alias: x}\n  - 3\n" });
    const error = await manifestError(dir);
    expect(error.problems.map((problem) => problem.message)).toEqual(["`version` must be a string", expect.stringContaining("dependency #1"), expect.stringContaining("dependency #2")]);
  });

  it("rejects a dependency list that is not a list", async () => {
    const dir = tempTree({ "lllm.toml": '[dependencies]\npackages = "../x"\n' });
    expect((await manifestError(dir)).message).toContain("`dependencies.packages` must be a list");
  });

  it("reports a toml syntax error with file and line", async () => {
    const dir = tempTree({ "lllm.toml": '[package]\nname = "p"\nversion = \n' });
    const error = await manifestError(dir);
    expect(error.code).toBe("manifest_parse");
    expect(error.location).toMatchObject({ file: path.join(dir, "lllm.toml"), line: 3 });
    expect(error.message).toContain("cannot parse the package manifest");
  });

  it("reports a yaml syntax error with file and line", async () => {
    const dir = tempTree({ "lllm.yaml": "name: p\ndescription: [unclosed\n" });
    const error = await manifestError(dir);
    expect(error.code).toBe("manifest_parse");
    expect(error.location?.file).toBe(path.join(dir, "lllm.yaml"));
    expect(error.location?.line).toBeGreaterThanOrEqual(2);
  });

  it("reports invalid JSON in package.json with the file", async () => {
    const dir = tempTree({ "package.json": "{ not json" });
    const error = await manifestError(dir);
    expect(error.code).toBe("manifest_parse");
    expect(error.location?.file).toBe(path.join(dir, "package.json"));
  });

  it("rejects a manifest that is not a mapping", async () => {
    const dir = tempTree({ "lllm.yaml": "- a\n- b\n" });
    const error = await manifestError(dir);
    expect(error.message).toContain("must be a table/mapping");
    expect(error.location?.file).toBe(path.join(dir, "lllm.yaml"));
  });
});

describe("readManifest: problems found after parsing point at their line", () => {
  it("TOML: a value of the wrong type, in a table or flat", async () => {
    const sectioned = await manifestError(tempTree({ "lllm.toml": '# my package\n[package]\nname = "p"\n  version = 1\n' }));
    expect(sectioned.message).toContain("`version` must be a string");
    expect(sectioned.problems[0]!.location).toMatchObject({ line: 4, column: 3 });
    const flat = await manifestError(tempTree({ "lllm.toml": 'description = "d"\nname = 5\n' }));
    expect(flat.problems[0]!.location).toMatchObject({ line: 2, column: 1 });
  });

  it("package.json: the key inside `lllm`", async () => {
    const error = await manifestError(tempTree({ "package.json": '{\n  "name": "x",\n  "lllm": {\n    "nmae": "p"\n  }\n}\n' }));
    expect(error.problems[0]!.location).toMatchObject({ line: 4 });
  });
});
