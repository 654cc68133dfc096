import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/runCli.js";
import { runCliInProcess } from "../helpers/runCliInProcess.js";
import { tempDir } from "../helpers/tempTree.js";

/** Each template: its tactic, and the answer its offline script gives. */
const TEMPLATES = [
  { template: "agent", tactic: "assistant", answer: "The text has 4 words: 4 WORDS!" },
  { template: "code-action", tactic: "counter", answer: "4 WORDS" },
  { template: "proxy", tactic: "analyst", answer: "The text has 4 words." },
] as const;

describe("lllm init", () => {
  for (const { template, tactic, answer } of TEMPLATES) {
    // The first template goes through the spawned CLI end to end; the others run it in this process.
    const cli = template === "agent" ? runCli : runCliInProcess;
    it(`--template ${template}: validate passes, the tactic runs offline, and its test replays`, async () => {
      const dir = path.join(tempDir("lllm-init-"), `my-${template}`);
      const created = await cli(["init", dir, "--template", template]);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stderr).toContain(`created package \`my_${template.replace("-", "_")}\` (template ${template})`);
      expect(created.stdout.split("\n")).toEqual(expect.arrayContaining(["lllm.toml", "tsconfig.json", "README.md", "tools/count_words.ts", "tools/shout.yaml", `tactics/${tactic}.yaml`, "scripted/demo.yaml", `tests/${tactic}.test.yaml`, `tests/__cassettes__/${tactic}.test.yaml/counts-words.yaml`]));

      const validated = await cli(["validate", `tactics/${tactic}.yaml`], { cwd: dir });
      expect(validated.stderr).toBe("");
      expect(validated.code, validated.stderr).toBe(0);
      expect(validated.stdout).toContain(`ok tactic ${tactic} (tactics/${tactic}.yaml)`);

      const ran = await cli(["run", `tactics/${tactic}.yaml`, "--model", "scripted:scripted/demo.yaml", "-i", "Count: the quick brown fox"], { cwd: dir, timeoutMs: 90_000 });
      expect(ran.stderr).not.toContain("error");
      expect(ran).toMatchObject({ code: 0, stdout: `${answer}\n` });

      const tested = await cli(["test", "tests", "--offline"], { cwd: dir, timeoutMs: 90_000 });
      expect(tested.stdout + tested.stderr).toContain("1 passed");
      expect(tested.code, tested.stderr).toBe(0);
    }, 240_000);
  }

  it("says the next step as a command a shell runs as written, for a folder whose name has a space or a quote", async () => {
    const parent = tempDir("lllm-init-");
    const created = await runCliInProcess(["init", "Tom's agent"], { cwd: parent });
    expect(created.code, created.stderr).toBe(0);
    const next = /Next: (.+)$/m.exec(created.stderr)?.[1];
    expect(next).toBe(`cd 'Tom'\\''s agent' && cat README.md`);
    const pasted = spawnSync("sh", ["-c", next!], { cwd: parent, encoding: "utf8" });
    expect(pasted.stderr).toBe("");
    expect(pasted.stdout).toContain("# tom_s_agent");
  }, 120_000);

  it("inside the new package, tools list and proxy list show it without -p . (issue 23, point 7)", async () => {
    const dir = path.join(tempDir("lllm-init-"), "here");
    expect((await runCliInProcess(["init", dir, "-t", "proxy"])).code).toBe(0);
    const tools = await runCli(["tools", "list"], { cwd: dir });
    expect(tools.stderr).toBe("");
    expect(tools.stdout).toMatch(/^here\.tools:count_words +Count the words of a text\nhere\.tools:shout +Write a text in capital letters \(command\)\n$/);
    const proxies = await runCli(["proxy", "list", "--json"], { cwd: dir });
    expect(proxies.stdout).toContain('"words"');
    // In its tools/ folder too, as npm finds the package.json above: the package is the folder with the manifest.
    const inTools = await runCliInProcess(["tools", "list"], { cwd: path.join(dir, "tools") });
    expect(inTools.stderr).toBe("");
    expect(inTools.stdout).toBe(tools.stdout);
  }, 120_000);

  it("the tsconfig type-checks the tools against lllm's own types, in a teammate's checkout too (no path of this machine in it)", async () => {
    const dir = path.join(tempDir("lllm-init-"), "typed");
    const created = await runCliInProcess(["init", dir]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.split("\n")).toEqual(expect.arrayContaining([".gitignore", "node_modules/lllm"]));
    // Issue 30: the shared files name no place of this machine; node_modules/lllm (git-ignored) is the link to lllm.
    expect(readFileSync(path.join(dir, "tsconfig.json"), "utf8")).not.toContain(ROOT);
    expect(readFileSync(path.join(dir, ".gitignore"), "utf8")).toBe("node_modules/\n");
    expect(realpathSync(path.join(dir, "node_modules", "lllm"))).toBe(realpathSync(ROOT));
    expect(readFileSync(path.join(dir, "README.md"), "utf8")).toContain("npx --yes -p typescript@5 tsc -p .");
    const tsc = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
    // A teammate's checkout: the files without node_modules, somewhere else, and the link its README says to make.
    const checkout = path.join(tempDir("lllm-checkout-"), "typed");
    cpSync(dir, checkout, { recursive: true, filter: (source) => !source.includes(`${path.sep}node_modules`) });
    mkdirSync(path.join(checkout, "node_modules"));
    symlinkSync(ROOT, path.join(checkout, "node_modules", "lllm")); // what `npm link lllm` makes
    const clean = spawnSync(process.execPath, [tsc, "-p", checkout], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    expect(clean.stdout + clean.stderr).toBe("");
    expect(clean.status).toBe(0);
    // A check that can fail, in the folder init made: the zod parameters type `run`'s arguments.
    const tool = path.join(dir, "tools", "count_words.ts");
    writeFileSync(tool, readFileSync(tool, "utf8").replace("text.split", "text.nope"));
    const broken = spawnSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    expect(broken.stdout).toContain("Property 'nope' does not exist on type 'string'");
  }, 300_000);

  it("--force never writes through a symbolic link: a linked file or folder of the template is refused, before anything is written (issue 29, point 7)", async () => {
    const parent = tempDir("lllm-init-");
    const outside = tempDir("lllm-outside-");
    writeFileSync(path.join(outside, "precious.toml"), "mine\n");
    mkdirSync(path.join(outside, "folder"));
    const dir = path.join(parent, "pkg");
    mkdirSync(dir);
    symlinkSync(path.join(outside, "precious.toml"), path.join(dir, "lllm.toml"));
    symlinkSync(path.join(outside, "folder"), path.join(dir, "scripts"));
    const forced = await runCliInProcess(["init", "pkg", "--force"], { cwd: parent });
    expect(forced.code, forced.stderr).toBe(2);
    expect(forced.stderr).toContain(`lllm: error: pkg has symbolic links where the template writes: lllm.toml -> ${path.join(outside, "precious.toml")}, scripts -> ${path.join(outside, "folder")}; lllm init does not write through links`);
    expect(readFileSync(path.join(outside, "precious.toml"), "utf8")).toBe("mine\n");
    expect(readdirSync(path.join(outside, "folder"))).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual(["lllm.toml", "scripts"]);
    // A link the template does not write to is left alone.
    rmSync(path.join(dir, "lllm.toml"));
    rmSync(path.join(dir, "scripts"));
    symlinkSync(path.join(outside, "folder"), path.join(dir, "data"));
    expect((await runCliInProcess(["init", "pkg", "--force"], { cwd: parent })).code).toBe(0);
    expect(readdirSync(path.join(outside, "folder"))).toEqual([]);
  }, 120_000);

  it("refuses a file, a package, a folder that is not empty (unless --force), and one it cannot write to: exit 2 with the reason", async () => {
    const parent = tempDir("lllm-init-");
    writeFileSync(path.join(parent, "a-file"), "x");
    const file = await runCliInProcess(["init", "a-file"], { cwd: parent });
    expect(file.code, file.stderr).toBe(2);
    expect(file.stderr).toContain("a-file is a file, not a folder");

    expect((await runCliInProcess(["init", "pkg"], { cwd: parent })).code).toBe(0);
    const again = await runCliInProcess(["init", "pkg"], { cwd: parent });
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toContain("pkg is a package already (it has lllm.toml)");

    mkdirSync(path.join(parent, "notes"));
    writeFileSync(path.join(parent, "notes", "todo.txt"), "keep me");
    const busy = await runCliInProcess(["init", "notes", "-t", "proxy"], { cwd: parent });
    expect(busy.code, busy.stderr).toBe(2);
    expect(busy.stderr).toContain("notes is not empty (1 entry)");
    expect(busy.stderr).toContain("--force");
    const forced = await runCliInProcess(["init", "notes", "-t", "proxy", "--force"], { cwd: parent });
    expect(forced.code, forced.stderr).toBe(0);
    expect(readdirSync(path.join(parent, "notes"))).toEqual(expect.arrayContaining(["todo.txt", "lllm.toml", "proxies"]));

    // Root may write to any folder: a read-only file system shows it the refusal (/proc), anyone else a 0555 folder.
    let readOnly = path.join("/proc", "lllm-init-test");
    if (process.getuid?.() !== 0) {
      readOnly = path.join(parent, "locked");
      mkdirSync(readOnly);
      chmodSync(readOnly, 0o555);
    }
    const denied = await runCliInProcess(["init", path.join(readOnly, "pkg")]);
    chmodSync(parent, 0o755);
    expect(denied.code, denied.stderr).toBe(2);
    expect(denied.stderr).toMatch(/lllm: error: (cannot write to .*: permission denied|cannot write the package into .*)/);
    expect(denied.stderr).not.toContain("    at ");
  }, 120_000);
});
