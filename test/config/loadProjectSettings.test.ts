import { chmodSync, chownSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { loadProjectSettings } from "../../src/config/index.js";
import { PriceTable } from "../../src/providers/PriceTable.js";
import { configError } from "./fixtures/helpers.js";
import { ROOT } from "../helpers/paths.js";
import { tempDir } from "../helpers/tempTree.js";
import { AS_ROOT, NOBODY } from "../helpers/runCliAs.js";

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

// Issue 29, point 2: git's safe.directory rule. "Another user" needs root to make (chown); root itself is trusted.
// CI runs the suite as root, so there the cases that chown never skip.
const canChown = AS_ROOT || process.env.CI === "true";

describe("loadProjectSettings trusts the current user's files (and root's) alone", () => {
  let top: string;
  let nested: string;
  let warnings: string[];
  const warn = (message: string): void => void warnings.push(message);
  const write = (relative: string, text: string, owner?: number): string => {
    const file = path.join(top, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    if (owner !== undefined) chownSync(file, owner, owner);
    return file;
  };

  beforeEach(() => {
    top = tempDir("lllm-settings-trust-");
    nested = path.join(top, "shared", "project", "deep");
    mkdirSync(nested, { recursive: true });
    warnings = [];
  });

  it.skipIf(!canChown)("skips another user's settings files with a warning naming each (and nothing else), and never imports their code", async () => {
    const mine = write(".lllmrc.yaml", "model: mine\n");
    const theirs = write("shared/.lllmrc.yaml", `model: theirs\nhome: ${path.join(top, "their-home")}\nprices:\n  gpt-4o-mini: {input: 1000, output: 1000}\n`, NOBODY);
    const marker = path.join(top, "imported");
    const code = write("shared/lllm.config.mjs", `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\nexport default { model: "theirs" };\n`, NOBODY);
    // Not a settings file at all (no `lllm` key): passed over without a word.
    write("shared/project/package.json", '{ "name": "app" }\n', NOBODY);
    expect(await loadProjectSettings(nested, { warn })).toEqual({ settings: { model: "mine" }, file: mine });
    expect(existsSync(marker)).toBe(false);
    expect(warnings).toEqual([
      `ignored the settings file ${theirs}: it belongs to another user (uid ${NOBODY}); lllm reads settings of yours (or root's) alone (to use it anyway: LLLM_TRUSTED_PATHS=${theirs})`,
      `ignored the settings file ${code}: it belongs to another user (uid ${NOBODY}); lllm reads settings of yours (or root's) alone (to use it anyway: LLLM_TRUSTED_PATHS=${code})`,
    ]);
    // Trusted by name: read as before.
    const trusted = await loadProjectSettings(nested, { warn, env: { LLLM_TRUSTED_PATHS: `/nowhere${path.delimiter}${theirs}` } });
    expect(trusted.settings.model).toBe("theirs");
  });

  it("skips a settings file anyone may write to, even one of the user's own", async () => {
    const file = write("shared/project/.lllmrc.json", '{ "model": "anyone" }\n');
    chmodSync(file, 0o666);
    expect(await loadProjectSettings(nested, { warn })).toEqual({ settings: {} });
    expect(warnings).toEqual([`ignored the settings file ${file}: anyone may write to it (mode 0666); lllm reads settings of yours (or root's) alone (to use it anyway: LLLM_TRUSTED_PATHS=${file})`]);
  });

  it("stops the walk at the repository's root and at the home folder", async () => {
    write(".lllmrc.yaml", "model: above\n");
    mkdirSync(path.join(top, "shared", "project", ".git"));
    expect(await loadProjectSettings(nested, { warn })).toEqual({ settings: {} });
    rmSync(path.join(top, "shared", "project", ".git"), { recursive: true });
    expect((await loadProjectSettings(nested, { warn })).settings.model).toBe("above");
    vi.stubEnv("HOME", path.join(top, "shared"));
    try {
      expect(await loadProjectSettings(nested, { warn })).toEqual({ settings: {} });
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("ignores a home: others may write to, or that another user owns, with a warning; a new folder of the user's is kept", async () => {
    const open = path.join(top, "open-home");
    mkdirSync(open);
    chmodSync(open, 0o777);
    const file = write("shared/project/.lllmrc.yaml", `model: m\nhome: ${open}\n`);
    expect(await loadProjectSettings(nested, { warn })).toEqual({ settings: { model: "m" }, file });
    expect(warnings).toEqual([`ignored \`home: ${open}\` of ${file}: others may write to it (mode 0777); lllm keeps no runs, keys or packages there (to use it anyway: LLLM_TRUSTED_PATHS=${open})`]);
    // A folder not made yet, under the user's own folder: lllm makes it 0700.
    write("shared/project/.lllmrc.yaml", "home: ./not-yet\n");
    expect((await loadProjectSettings(nested, { warn })).settings.home).toBe(path.join(top, "shared/project/not-yet"));
    // Under a folder others may write to (no sticky bit): another user could swap it.
    write("shared/project/.lllmrc.yaml", `home: ${path.join(open, "inner")}\n`);
    expect((await loadProjectSettings(nested, { warn })).settings.home).toBeUndefined();
    expect(warnings[1]).toContain(`others may write to the folder above it, ${open} (mode 0777)`);
    if (!canChown) return; // the rest gives a folder to nobody
    const theirs = path.join(top, "their-home");
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, NOBODY, NOBODY);
    write("shared/project/.lllmrc.yaml", `home: ${theirs}\n`);
    expect((await loadProjectSettings(nested, { warn })).settings.home).toBeUndefined();
    expect(warnings[2]).toContain(`ignored \`home: ${theirs}\` of ${file}: it belongs to another user (uid ${NOBODY})`);
  });
});
