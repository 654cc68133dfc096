import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadProjectSettings } from "../../src/config/index.js";
import { PriceTable } from "../../src/providers/PriceTable.js";
import { configError } from "./fixtures/helpers.js";
import { ROOT } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempTree.js";

describe("loadProjectSettings", () => {
  let root: string;
  let nested: string;
  const write = (relative: string, text: string): string => {
    const file = path.join(root, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  };

  beforeEach(() => {
    root = tempDir("lllm-settings-");
    nested = path.join(root, "project", "src", "deep");
    mkdirSync(nested, { recursive: true });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("finds the settings file above a nested folder and resolves its paths against it", async () => {
    const file = write("project/.lllmrc.yaml", "model: gpt-4o-mini\npackages: [./packages/weather, /opt/shared]\nhome: ./.lllm-home\n");
    // a package.json without an `lllm` key on the way up is normal and skipped
    write("project/src/package.json", '{ "name": "app", "version": "1.0.0" }\n');
    expect(await loadProjectSettings(nested)).toEqual({
      settings: { model: "gpt-4o-mini", packages: [path.join(root, "project/packages/weather"), "/opt/shared"], home: path.join(root, "project/.lllm-home") },
      file,
    });
  });

  it("takes the nearest file, and reads the lllm key of package.json", async () => {
    write("project/lllm.config.json", '{ "model": "far" }\n');
    const file = write("project/src/package.json", '{ "name": "app", "lllm": { "model": "near" } }\n');
    expect(await loadProjectSettings(nested)).toEqual({ settings: { model: "near" }, file });
  });

  it("skips a package's own manifest in package.json#lllm", async () => {
    const file = write("project/.lllmrc", "model: outer\n");
    write("project/src/package.json", '{ "name": "weather", "lllm": { "name": "weather", "version": "0.1.0" } }\n');
    expect(await loadProjectSettings(nested)).toEqual({ settings: { model: "outer" }, file });
  });

  it("loads an ES module config", async () => {
    const file = write("project/lllm.config.mjs", 'export default { model: "from-js", packages: ["./p"] };\n');
    expect(await loadProjectSettings(nested)).toEqual({ settings: { model: "from-js", packages: [path.join(root, "project/p")] }, file });
  });

  it("reports an unknown key with the file, the line and the closest valid key", async () => {
    const file = write("project/lllm.config.yaml", "model: gpt-4o\nmodle: gpt-4o-mini\npackages: ./one\n");
    const error = await configError(loadProjectSettings(nested));
    expect(error.code).toBe("config_invalid");
    expect(error.message).toBe(
      `2 problems:\n  ${file}:2:1: unknown key \`modle\` at the top level\n    did you mean \`model\`?\n  ${file}:3:11: packages must be a list (got "./one")`,
    );
  });

  it("reports an unknown key in package.json#lllm at its line", async () => {
    const file = write("project/package.json", '{\n  "name": "app",\n  "lllm": {\n    "hom": "x"\n  }\n}\n');
    const error = await configError(loadProjectSettings(nested));
    expect(error.message).toBe(`${file}:4:5: unknown key \`hom\` in package.json#lllm\n  did you mean one of \`home\`, \`log\`?`);
  });

  it("reads a model's cache-write price from prices:, and the run's cost uses it", async () => {
    write("project/.lllmrc.yaml", "prices:\n  my-claude: {input: 1, cached_input: 0.1, cache_write: 2, output: 5}\n");
    const { settings } = await loadProjectSettings(nested);
    expect(settings.prices).toEqual({ "my-claude": { input: 1, cached_input: 0.1, cache_write: 2, output: 5 } });
    const table = PriceTable.load(settings.prices);
    // 0.5M fresh at 1, 0.2M read from the cache at 0.1, 0.3M written to it at 2 (not 1.25 x 1), 0.1M out at 5.
    expect(table.costOf("anthropic/my-claude", { promptTokens: 1_000_000, cachedPromptTokens: 200_000, cacheWritePromptTokens: 300_000, completionTokens: 100_000 })).toBeCloseTo(0.5 + 0.02 + 0.6 + 0.5, 10);
  });

  it("returns no settings when there is no file, and is not confused by this repository's package.json", async () => {
    const repo = ROOT;
    const result = await loadProjectSettings(path.join(repo, "src"));
    expect(result.file).not.toBe(path.join(repo, "package.json"));
    // nothing in the temporary tree; the user's own config folder (cosmiconfig's "global" place) is not read either
    expect(await loadProjectSettings(nested)).toEqual({ settings: {} });
  });
});
