import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/runCli.js";
import { AS_ROOT, NOBODY } from "../helpers/runCliAs.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir, tempTree } from "../helpers/tempTree.js";

// Issue 29, point 2 (and 13): lllm trusts the current user's files and root's, as git's safe.directory. Another
// user's files need root to make (chown); as root, the victim of the reproduction is root itself. CI runs
// the suite as root, so there these tests never skip; a developer's run as anyone else says it skipped. The first of
// each command (`run`, `logs`, `keys`, `tools`) spawns the built CLI, end to end, as does `keys set`, which reads its
// standard input; the others run its main() in this process (lllm checks who owns the files, not who it runs as).
const weather = path.join(ROOT, "packages-example/weather/tactics/weather.yaml");
const parisTokyo = path.join(ROOT, "packages-example/weather/scripted/paris-tokyo.yaml");
const runWeather = ["run", weather, "--model", `scripted:${parisTokyo}`, "--input", "Paris and Tokyo?", "--no-stream"];

/** A folder like /tmp: anyone may make files in it, no one may remove another's. */
function stickyShared(): string {
  const shared = path.join(tempDir("lllm-trust-"), "shared");
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  return shared;
}

/** Files written as `nobody` would leave them. */
function asNobody(...targets: string[]): void {
  expect(AS_ROOT, "this test needs root (it chowns files to nobody); CI runs the suite as root").toBe(true);
  for (const target of targets) chownSync(target, NOBODY, NOBODY);
}

describe.skipIf(!AS_ROOT && process.env.CI !== "true")("lllm ignores settings, homes and packages of another user", () => {
  it("settings files another user left in a shared parent folder: skipped with a warning, their code never run, their home never written", async () => {
    const shared = stickyShared();
    const project = path.join(shared, "project");
    mkdirSync(project);
    const theirHome = path.join(shared, "their-home");
    mkdirSync(theirHome, { mode: 0o777 });
    chmodSync(theirHome, 0o777);
    const marker = path.join(shared, "imported");
    const settings = path.join(shared, ".lllmrc.yaml");
    writeFileSync(settings, `model: scripted:${parisTokyo}\nhome: ${theirHome}\nprices:\n  gpt-4o-mini: {input: 1000, output: 1000}\n`);
    const code = path.join(shared, "lllm.config.mjs");
    writeFileSync(code, `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran as " + process.getuid());\nexport default {};\n`);
    asNobody(theirHome, settings, code);
    const home = tempDir("lllm-home-");

    const run = await runCli(runWeather, { cwd: project, env: { LLLM_HOME: home } });
    expect(run.stdout).toBe("It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.\n");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`lllm: warning: ignored the settings file ${settings}: it belongs to another user (uid ${NOBODY})`);
    expect(run.stderr).toContain(`lllm: warning: ignored the settings file ${code}: it belongs to another user (uid ${NOBODY})`);
    expect(run.stderr).toContain(`(to use it anyway: LLLM_TRUSTED_PATHS=${code})`);
    expect(existsSync(marker)).toBe(false);
    // The run is recorded in the user's own home, nothing in theirs.
    expect(readdirSync(theirHome)).toEqual([]);
    const logs = await runCli(["logs", "--json"], { cwd: project, env: { LLLM_HOME: home } });
    expect(JSON.parse(logs.stdout).runs).toHaveLength(1);
  }, 120_000);

  it("an LLLM_HOME another user owns (0777): keys set warns, naming it, and stores the key in ~/.lllm, not there (13)", async () => {
    const theirHome = path.join(stickyShared(), "lllm-home");
    mkdirSync(theirHome);
    chmodSync(theirHome, 0o777);
    asNobody(theirHome);
    const userHome = tempDir("lllm-user-");
    const stored = await runCli(["keys", "set", "OPENAI_API_KEY"], { env: { LLLM_HOME: theirHome, HOME: userHome }, input: "sk-mine-0123\n" });
    expect(stored.code, stored.stderr).toBe(0);
    expect(stored.stderr).toBe(
      `lllm: warning: ignored LLLM_HOME=${theirHome}: it belongs to another user (uid ${NOBODY}); lllm uses ${userHome}/.lllm instead (to use it anyway: LLLM_TRUSTED_PATHS=${theirHome})\n` +
        `lllm: stored OPENAI_API_KEY in ${userHome}/.lllm/keys.json\n`,
    );
    expect(readdirSync(theirHome)).toEqual([]);
    // Trusted by name, it is used.
    const trusted = await runCliInProcess(["keys", "path"], { env: { LLLM_HOME: theirHome, HOME: userHome, LLLM_TRUSTED_PATHS: theirHome } });
    expect(trusted).toMatchObject({ code: 0, stdout: `${theirHome}/keys.json\n`, stderr: "" });
  }, 60_000);

  it("a folder with only tools/ is a package without -p; a shared folder whose tools/ is another user's is not (issue 30)", async () => {
    const tool = 'import { tool, z } from "lllm";\nexport default tool({ name: "shout", description: "Upper-case a text", parameters: z.object({ text: z.string() }), run: ({ text }) => text.toUpperCase() });\n';
    const mine = tempTree({ "tools/shout.ts": tool });
    const listed = await runCli(["tools", "list"], { cwd: mine });
    expect(listed.stderr).toBe("");
    expect(listed.stdout).toMatch(/^\S+\.tools:shout +Upper-case a text\n$/);
    const called = await runCliInProcess(["tools", "call", "shout", "--args", '{"text": "hi"}'], { cwd: mine });
    expect(called.code, called.stderr).toBe(0);
    expect(called.stdout).toContain("\nHI\n");

    const shared = stickyShared();
    mkdirSync(path.join(shared, "tools"));
    const marker = path.join(shared, "imported");
    writeFileSync(path.join(shared, "tools", "evil.mjs"), `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\nexport default [];\n`);
    asNobody(path.join(shared, "tools"), path.join(shared, "tools", "evil.mjs"));
    const refused = await runCliInProcess(["tools", "list"], { cwd: shared });
    expect(refused.stderr).toContain(`lllm: warning: ${shared} is not taken as a package without -p: others may write to it (mode 1777)`);
    expect(existsSync(marker)).toBe(false);
  }, 120_000);

  it("./lllm_packages: a package folder of another user's in a shared working folder is not loaded, its code never run", async () => {
    const shared = stickyShared();
    const marker = path.join(shared, "imported");
    const evil = path.join(shared, "lllm_packages", "evil");
    mkdirSync(path.join(evil, "tools"), { recursive: true });
    writeFileSync(path.join(evil, "tools", "pwn.mjs"), `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran as " + process.getuid());\nexport default [];\n`);
    asNobody(path.join(shared, "lllm_packages"), evil, path.join(evil, "tools"), path.join(evil, "tools", "pwn.mjs"));
    // A package of the user's own beside it, linked in, still loads.
    const mine = tempTree({ "lllm.yaml": "name: mine\n", "tools/shout.mjs": 'export default { name: "shout", description: "Shout", parameters: {}, run: () => "HI" };\n' });
    const linked = path.join(shared, "mine-project");
    mkdirSync(path.join(linked, "lllm_packages"), { recursive: true });
    symlinkSync(path.join(evil), path.join(linked, "lllm_packages", "evil"));
    symlinkSync(mine, path.join(linked, "lllm_packages", "mine"));
    const home = tempDir("lllm-home-");
    for (const cwd of [shared, linked]) {
      const run = await runCliInProcess(runWeather, { cwd, env: { LLLM_HOME: home } });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe("It is sunny in both cities, 22 degrees celsius in Paris and in Tokyo.\n");
      expect(run.stderr).toContain(`lllm: warning: ${path.join(cwd, "lllm_packages", "evil")} is not loaded as a package: `);
      expect(run.stderr).toContain(`belongs to another user (uid ${NOBODY})`);
      expect(existsSync(marker)).toBe(false);
    }
    const listed = await runCliInProcess(["tools", "list"], { cwd: linked, env: { LLLM_HOME: home } });
    expect(listed.stdout).toContain("mine.tools:shout");
    expect(listed.stdout).not.toContain("evil");
    expect(existsSync(marker)).toBe(false);
  }, 120_000);
});
