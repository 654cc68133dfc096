import { symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir, writeTree } from "../helpers/tempTree.js";
import { startVerdaccio, type Verdaccio } from "../helpers/verdaccio.js";
import { lllm, project, lllmInProcess } from "./packageFixtures.js";

// lllm pack, lllm publish --to npm (npm's own publish) into verdaccio, then list, outdated and update.
// Each command spawns the built CLI once; the other cases run it in this process (`lllmInProcess`). Every publish
// spawns: npm writes to the CLI's own stderr, which in this process is the test's, where no assertion would see it.


let registry: Verdaccio;
beforeAll(async () => {
  registry = await startVerdaccio();
}, 120_000);
afterAll(() => registry?.stop());

function greetPackage(version: string, text: string): string {
  const dir = tempDir("lllm-author-");
  writeTree(dir, {
    "lllm.toml": `[package]\nname = "greet"\nversion = "${version}"\n`,
    "prompts/system.md": text,
    ".env": "OPENAI_API_KEY=sk-secret\n",
    "node_modules/x/index.js": "",
    ".npmrc": `registry=${registry.url}\n${registry.url.replace(/^http:/, "")}:_authToken=${registry.token}\n`,
  });
  return dir;
}

describe("lllm pack", () => {
  it("lists what it packs, leaves out dot files and node_modules, and refuses a link", async () => {
    const dir = greetPackage("1.0.0", "Hi.");
    const home = tempDir("lllm-home-");
    const packed = await lllm(["pack"], { cwd: dir, home });
    expect(packed.code, packed.stderr).toBe(0);
    expect(packed.stdout).toBe(`${path.join(dir, "greet-1.0.0.tgz")}\n`);
    expect(packed.stderr).toMatch(/lllm: 3 files packed \(\d+ bytes\):\n {2}lllm\.toml\n {2}package\.json\n {2}prompts\/system\.md\n/);
    symlinkSync("/etc/passwd", path.join(dir, "prompts", "leak.md"));
    const linked = await lllmInProcess(["pack"], { cwd: dir, home });
    expect(linked.code, linked.stderr).toBe(2);
    expect(linked.stderr).toContain("prompts/leak.md is a link: a package holds plain files only");
  });

  it("names the archive after the version npm publishes: package.json's, when only it has one", async () => {
    const dir = tempDir("lllm-pj-");
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "@private/notes", version: "0.1.0", lllm: { name: "notes" } }));
    writeFileSync(path.join(dir, "notes.md"), "Notes.");
    const packed = await lllmInProcess(["pack"], { cwd: dir, home: tempDir("lllm-home-") });
    expect(packed.code, packed.stderr).toBe(0);
    expect(packed.stdout).toBe(`${path.join(dir, "notes-0.1.0.tgz")}\n`);
  });

  it("-o naming a folder, or a file in a folder that does not exist, is the user's to fix (exit 2), not an internal error", async () => {
    const dir = greetPackage("1.0.0", "Hi.");
    const home = tempDir("lllm-home-");
    const intoFolder = await lllmInProcess(["pack", "-o", dir], { cwd: dir, home });
    expect(intoFolder.code, intoFolder.stderr).toBe(2);
    expect(intoFolder.stderr).toContain(`-o ${dir}: that is a folder, not a file`);
    expect(intoFolder.stderr).toContain(`-o ${path.join(dir, "greet-1.0.0.tgz")}`);
    const missing = path.join(dir, "nope", "x.tgz");
    const nowhere = await lllmInProcess(["pack", "-o", missing], { cwd: dir, home });
    expect(nowhere.code, nowhere.stderr).toBe(2);
    expect(nowhere.stderr).toContain(`there is no folder ${path.dirname(missing)}`);
    expect(nowhere.stderr).not.toContain("internal error");
  });

  it("says a folder with nothing to pack is the user's to fix (exit 2): it was an internal error", async () => {
    const dir = tempDir("lllm-empty-");
    writeTree(dir, { ".env": "OPENAI_API_KEY=sk-secret\n" });
    const home = tempDir("lllm-home-");
    const packed = await lllmInProcess(["pack"], { cwd: dir, home });
    expect(packed.code, packed.stderr).toBe(2);
    expect(packed.stderr).toContain(`${dir} holds nothing to pack`);
    expect(packed.stderr).not.toContain("internal error");
    expect(packed.stdout).toBe("");
  });
});

describe("lllm publish --to npm, outdated, update, list", () => {
  it("refuses a package that depends on a folder of this machine, naming the dependency and its line", async () => {
    const dir = greetPackage("1.0.0", "Hi.");
    writeFileSync(path.join(dir, "lllm.toml"), `[package]\nname = "greet"\nversion = "1.0.0"\n\n[dependencies]\npackages = ["../helpers as helpers"]\n`);
    const packed = await lllmInProcess(["pack"], { cwd: dir, home: tempDir("lllm-home-") });
    expect(packed.code, packed.stderr).toBe(2);
    expect(packed.stdout).toBe("");
    expect(packed.stderr).toContain("the package depends on `../helpers`, which exists only on this machine");
    expect(packed.stderr).toContain("lllm.toml:");
    expect(packed.stderr).toContain("lllm publish");
  });

  it("publishes with npm's own publish; the project adds it, sees newer versions, updates within its range, and lists it", async () => {
    const home = tempDir("lllm-home-");
    const dir = project();
    writeFileSync(path.join(dir, ".npmrc"), `registry=${registry.url}\n`);
    for (const [version, text] of [["1.0.0", "One."], ["1.1.0", "One point one."], ["2.0.0", "Two."]] as const) {
      const published = await lllm(["publish", "--to", "npm"], { cwd: greetPackage(version, text), home, env: { npm_config_cache: tempDir("lllm-npm-cache-") } });
      expect(published.stderr).not.toContain(registry.token);
      expect(published.code, published.stderr).toBe(0);
      expect(published.stdout).toBe(`npm:greet@${version}\n`);
      if (version === "1.0.0") expect((await lllm(["add", "npm:greet@^1.0.0"], { cwd: dir, home })).code).toBe(0);
    }
    const outdated = await lllm(["outdated", "--json"], { cwd: dir, home });
    expect(outdated.code, outdated.stderr).toBe(0);
    expect(JSON.parse(outdated.stdout).outdated).toEqual([{ name: "greet", source: "npm:greet@^1.0.0", current: "1.0.0", wanted: "1.1.0", latest: "2.0.0" }]);
    const updated = await lllm(["update"], { cwd: dir, home });
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stderr).toContain("npm:greet@^1.0.0: 1.0.0 -> 1.1.0");
    expect((await lllm(["run", "tactic.yaml", "--model", "scripted:script.yaml", "--input", "hi", "--dry-run"], { cwd: dir, home })).stdout).toContain("One point one.");
    const list = await lllm(["list"], { cwd: dir, home });
    expect(list.stdout).toBe(
      ["NAME   SOURCE            VERSION  CODE  TRUSTED BY  STATE", "greet  npm:greet@^1.0.0  1.1.0    none  -           installed", ""].join("\n"),
    );
    const json = JSON.parse((await lllmInProcess(["list", "--json"], { cwd: dir, home })).stdout);
    expect(json.packages).toEqual([{ name: "greet", source: "npm:greet@^1.0.0", version: "1.1.0", code: [], state: "installed" }]);
    expect((await lllmInProcess(["list"], { cwd: dir, home: tempDir("lllm-home-") })).stdout).toContain("not installed (run `lllm install`)");
  }, 180_000);
});
