import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

/** Each template: its tactic, and the answer its offline script gives. */
const TEMPLATES = [
  { template: "agent", tactic: "assistant", answer: "The text has 4 words: 4 WORDS!" },
  { template: "code-action", tactic: "counter", answer: "4 WORDS" },
  { template: "proxy", tactic: "analyst", answer: "The text has 4 words." },
] as const;

describe("lllm init", () => {
  for (const { template, tactic, answer } of TEMPLATES) {
    it(`--template ${template}: validate passes, the tactic runs offline, and its test replays`, async () => {
      const dir = path.join(tempDir("lllm-init-"), `my-${template}`);
      const created = await runCli(["init", dir, "--template", template]);
      expect(created.code).toBe(0);
      expect(created.stderr).toContain(`created package \`my_${template.replace("-", "_")}\` (template ${template})`);
      expect(created.stdout.split("\n")).toEqual(expect.arrayContaining(["lllm.toml", "tsconfig.json", "README.md", "tools/count_words.ts", "tools/shout.yaml", `tactics/${tactic}.yaml`, "scripted/demo.yaml", `tests/${tactic}.test.yaml`, `tests/__cassettes__/${tactic}.test.yaml/counts-words.yaml`]));

      const validated = await runCli(["validate", `tactics/${tactic}.yaml`], { cwd: dir });
      expect(validated.stderr).toBe("");
      expect(validated.code).toBe(0);
      expect(validated.stdout).toContain(`ok tactic ${tactic} (tactics/${tactic}.yaml)`);

      const ran = await runCli(["run", `tactics/${tactic}.yaml`, "--model", "scripted:scripted/demo.yaml", "-i", "Count: the quick brown fox"], { cwd: dir, timeoutMs: 90_000 });
      expect(ran.stderr).not.toContain("error");
      expect(ran).toMatchObject({ code: 0, stdout: `${answer}\n` });

      const tested = await runCli(["test", "tests", "--offline"], { cwd: dir, timeoutMs: 90_000 });
      expect(tested.stdout + tested.stderr).toContain("1 passed");
      expect(tested.code).toBe(0);
    }, 240_000);
  }

  it("inside the new package, tools list and proxy list show it without -p . (issue 23, point 7)", async () => {
    const dir = path.join(tempDir("lllm-init-"), "here");
    expect((await runCli(["init", dir, "-t", "proxy"])).code).toBe(0);
    const tools = await runCli(["tools", "list"], { cwd: dir });
    expect(tools.stderr).toBe("");
    expect(tools.stdout).toMatch(/^here\.tools:count_words +Count the words of a text\nhere\.tools:shout +Write a text in capital letters \(command\)\n$/);
    const proxies = await runCli(["proxy", "list", "--json"], { cwd: dir });
    expect(proxies.stdout).toContain('"words"');
  }, 120_000);

  it("the tsconfig type-checks the tools against lllm's own types", async () => {
    const dir = path.join(tempDir("lllm-init-"), "typed");
    expect((await runCli(["init", dir])).code).toBe(0);
    const tsc = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const clean = spawnSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    expect(clean.stdout + clean.stderr).toBe("");
    expect(clean.status).toBe(0);
    // A check that can fail: the zod parameters type `run`'s arguments.
    const tool = path.join(dir, "tools", "count_words.ts");
    writeFileSync(tool, readFileSync(tool, "utf8").replace("text.split", "text.nope"));
    const broken = spawnSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    expect(broken.stdout).toContain("Property 'nope' does not exist on type 'string'");
  }, 300_000);

  it("refuses a file, a package, a folder that is not empty (unless --force), and one it cannot write to: exit 2 with the reason", async () => {
    const parent = tempDir("lllm-init-");
    writeFileSync(path.join(parent, "a-file"), "x");
    const file = await runCli(["init", "a-file"], { cwd: parent });
    expect(file.code).toBe(2);
    expect(file.stderr).toContain("a-file is a file, not a folder");

    expect((await runCli(["init", "pkg"], { cwd: parent })).code).toBe(0);
    const again = await runCli(["init", "pkg"], { cwd: parent });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("pkg is a package already (it has lllm.toml)");

    mkdirSync(path.join(parent, "notes"));
    writeFileSync(path.join(parent, "notes", "todo.txt"), "keep me");
    const busy = await runCli(["init", "notes", "-t", "proxy"], { cwd: parent });
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain("notes is not empty (1 entry)");
    expect(busy.stderr).toContain("--force");
    const forced = await runCli(["init", "notes", "-t", "proxy", "--force"], { cwd: parent });
    expect(forced.code).toBe(0);
    expect(readdirSync(path.join(parent, "notes"))).toEqual(expect.arrayContaining(["todo.txt", "lllm.toml", "proxies"]));

    // Root may write to any folder: a read-only file system shows it the refusal (/proc), anyone else a 0555 folder.
    let readOnly = path.join("/proc", "lllm-init-test");
    if (process.getuid?.() !== 0) {
      readOnly = path.join(parent, "locked");
      mkdirSync(readOnly);
      chmodSync(readOnly, 0o555);
    }
    const denied = await runCli(["init", path.join(readOnly, "pkg")]);
    chmodSync(parent, 0o755);
    expect(denied.code).toBe(2);
    expect(denied.stderr).toMatch(/lllm: error: (cannot write to .*: permission denied|cannot write the package into .*)/);
    expect(denied.stderr).not.toContain("    at ");
  }, 120_000);
});
