import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { packageTarball } from "../helpers/tarball.js";
import { tempDir } from "../helpers/tempTree.js";
import { lllm, PROMPT_PACKAGE } from "./packageFixtures.js";

// A package of YAML tactics alone is added without a question: its files carry no code. A tactic of it that named a
// file outside the package by path (`base: /tmp/…/common.yaml`, `packages: [/tmp/…]`) loaded config nobody was shown,
// and through that config a package whose tool code ran at once: code from a folder another user may write to.
describe("a tactic of an installed package names files by path only inside its package", () => {
  const TACTIC = ["name: hello", "global:", "  model_name: gpt-4o-mini", "agent_configs:", "  - name: a", "    system_prompt: Hi.", ""].join("\n");

  /** A folder outside the package holding a tactic layer and a package whose tool code leaves a marker when loaded. */
  function outside(): { dir: string; marker: string; common: string; code: string } {
    const dir = tempDir("lllm-shared-");
    const marker = path.join(dir, "the-code-ran");
    const code = path.join(dir, "evil");
    mkdirSync(path.join(code, "tools"), { recursive: true });
    writeFileSync(path.join(code, "lllm.toml"), '[package]\nname = "evil"\nversion = "1.0.0"\n');
    writeFileSync(path.join(code, "tools", "x.mjs"), `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\nexport default { name: "x", description: "x", parameters: { type: "object", properties: {} }, run: () => "x" };\n`);
    const common = path.join(dir, "common.yaml");
    writeFileSync(common, `packages: [${JSON.stringify(code)}]\n`);
    return { dir, marker, common, code };
  }

  async function added(tactics: Record<string, string>): Promise<{ dir: string; home: string }> {
    const dir = tempDir("lllm-project-");
    const home = tempDir("lllm-home-");
    writeFileSync(path.join(dir, "nice.tgz"), packageTarball({ ...PROMPT_PACKAGE, "lllm.toml": '[package]\nname = "nice"\nversion = "1.0.0"\n', ...tactics }));
    const add = await lllm(["add", "nice.tgz"], { cwd: dir, home });
    expect(add.code, add.stderr).toBe(0);
    expect(add.stderr).toContain("no code");
    return { dir, home };
  }

  it("refuses a `base:` path out of the package before reading it, and a `packages:` folder out of it before loading it", async () => {
    const shared = outside();
    const { dir, home } = await added({
      "tactics/viaBase.yaml": `base: ${JSON.stringify(shared.common)}\n${TACTIC}`,
      "tactics/viaPackages.yaml": `packages: [${JSON.stringify(shared.code)}]\n${TACTIC}`,
      "tactics/viaRelative.yaml": `base: ../../../../../${path.relative("/", shared.common)}\n${TACTIC}`,
    });
    for (const [tactic, what] of [["viaBase", "`base`"], ["viaPackages", "a `packages:` entry"], ["viaRelative", "`base`"]] as const) {
      for (const command of [["validate", `nice.tactics:${tactic}`], ["run", `nice.tactics:${tactic}`, "--model", "scripted:none.yaml", "--input", "x", "--json"]]) {
        const result = await lllm(command, { cwd: dir, home });
        expect(result.code, `${command.join(" ")}: ${result.stderr}`).toBe(2);
        expect(result.stderr).toContain(`${what} of a tactic in an installed package names `);
        expect(result.stderr).toContain("outside the package");
        expect(result.stderr).toMatch(new RegExp(`tactics/${tactic}\\.yaml:\\d+:\\d+: `));
      }
    }
    expect(existsSync(shared.marker)).toBe(false);
  }, 120_000);

  it("lllm add refuses a package whose manifest depends on a folder outside it, which would run unseen code", async () => {
    const shared = outside();
    const dir = tempDir("lllm-project-");
    const home = tempDir("lllm-home-");
    writeFileSync(path.join(dir, "nice.tgz"), packageTarball({ ...PROMPT_PACKAGE, "lllm.toml": `[package]\nname = "nice"\nversion = "1.0.0"\n\n[dependencies]\npackages = [${JSON.stringify(shared.code)}]\n`, "tactics/hello.yaml": TACTIC }));
    const add = await lllm(["add", "nice.tgz"], { cwd: dir, home });
    expect(add.code, add.stderr).toBe(2);
    expect(add.stderr).toContain(`its manifest depends on \`${shared.code}\`, a folder outside the package, which an installed package cannot use; nothing was installed`);
    const mine = path.join(dir, "mine.yaml");
    writeFileSync(mine, TACTIC);
    expect((await lllm(["validate", mine], { cwd: dir, home })).code).toBe(0);
    expect(existsSync(shared.marker)).toBe(false);
  }, 120_000);

  it("keeps paths inside the package working: a base beside the tactic, the package itself in `packages:`", async () => {
    const { dir, home } = await added({
      "tactics/common.yaml": "global:\n  model_name: gpt-4o-mini\n",
      "tactics/hello.yaml": ["name: hello", "base: ./common.yaml", "packages: [..]", "agent_configs:", "  - name: a", "    system_prompt_path: nice.prompts:system", ""].join("\n"),
    });
    const result = await lllm(["validate", "nice.tactics:hello", "--json"], { cwd: dir, home });
    expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ valid: true, agents: [{ name: "a", model: "gpt-4o-mini", system_prompt: "nice.prompts:system" }] });
  }, 120_000);

  it("lllm pack refuses a tactic whose base or packages lie outside the package, which an installed copy would refuse", async () => {
    const shared = outside();
    const home = tempDir("lllm-home-");
    const write = (tactic: string): string => {
      const dir = tempDir("lllm-pkg-");
      mkdirSync(path.join(dir, "tactics"));
      writeFileSync(path.join(dir, "lllm.toml"), '[package]\nname = "nice"\nversion = "1.0.0"\n');
      writeFileSync(path.join(dir, "tactics", "hello.yaml"), tactic);
      return dir;
    };
    const viaBase = await lllm(["pack"], { cwd: write(`base: ${JSON.stringify(shared.common)}\n${TACTIC}`), home });
    expect(viaBase.code, viaBase.stderr).toBe(2);
    expect(viaBase.stderr).toContain(`tactics/hello.yaml names \`${shared.common}\` as its base, outside the package: an installed copy of the package refuses to use it`);
    const viaPackages = await lllm(["pack"], { cwd: write(`packages: [.., ../../elsewhere]\n${TACTIC}`), home });
    expect(viaPackages.code, viaPackages.stderr).toBe(2);
    expect(viaPackages.stderr).toContain("tactics/hello.yaml names `../../elsewhere` in its packages, outside the package");
    // A base file elsewhere in the package, whose own packages lead out.
    const deeper = write(`base: ../common/base.yaml\n${TACTIC}`);
    mkdirSync(path.join(deeper, "common"));
    writeFileSync(path.join(deeper, "common", "base.yaml"), "packages: [../../elsewhere]\n");
    const viaDeeperBase = await lllm(["pack"], { cwd: deeper, home });
    expect(viaDeeperBase.code, viaDeeperBase.stderr).toBe(2);
    expect(viaDeeperBase.stderr).toContain("common/base.yaml names `../../elsewhere` in its packages, outside the package");
    const inside = await lllm(["pack"], { cwd: write(`base: ./common.yaml\npackages: [.., npm:@acme/tools@1]\n${TACTIC}`), home });
    expect(inside.stderr).not.toContain("error");
    expect(inside.code, inside.stderr).toBe(0);
  }, 120_000);

  it("leaves a tactic of the user's own free to name any path", async () => {
    const shared = outside();
    const dir = tempDir("lllm-project-");
    const home = tempDir("lllm-home-");
    writeFileSync(path.join(dir, "mine.yaml"), `base: ${JSON.stringify(shared.common)}\n${TACTIC}`);
    const result = await lllm(["validate", "mine.yaml"], { cwd: dir, home });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(shared.marker)).toBe(true); // the user named it: the package loads
  }, 120_000);
});
