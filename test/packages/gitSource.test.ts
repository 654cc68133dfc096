import { execFileSync } from "node:child_process";
import { readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir, writeTree } from "../helpers/tempTree.js";
import { cacheOf, lllm, project } from "./packageFixtures.js";

// git+ sources from bare repositories over file://, made here with git itself.

/** A bare repository and a work tree that pushes to it; `commit` writes files and pushes the branch. */
function gitRepository(): { url: string; commit(files: Record<string, string>, message: string): string; tag(name: string): void; work: string } {
  const root = tempDir("lllm-git-");
  const bare = path.join(root, "packages.git");
  const work = path.join(root, "work");
  const git = (cwd: string, ...args: string[]): string => execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } }).trim();
  git(root, "init", "--quiet", "--bare", "--initial-branch=main", bare);
  git(root, "init", "--quiet", "--initial-branch=main", work);
  return {
    url: `file://${bare}`,
    work,
    commit(files, message) {
      writeTree(work, files);
      git(work, "add", "-A");
      git(work, "commit", "--quiet", "-m", message);
      git(work, "push", "--quiet", bare, "main");
      return git(work, "rev-parse", "HEAD");
    },
    tag(name) {
      git(work, "tag", "-a", name, "-m", name);
      git(work, "push", "--quiet", bare, name);
    },
  };
}

describe("a git package", () => {
  it("resolves a branch to a commit and pins it: install gets the pinned commit after the branch moves; update moves it, asking again for new code", async () => {
    const repo = gitRepository();
    const first = repo.commit({ "packages/greet/lllm.toml": '[package]\nname = "greet"\nversion = "1.0.0"\n', "packages/greet/prompts/system.md": "First." }, "one");
    const dir = project();
    const home = tempDir("lllm-home-");
    const added = await lllm(["add", `git+${repo.url}#main:packages/greet`], { cwd: dir, home });
    expect(added.stderr).toContain(`(greet 1.0.0 at ${first.slice(0, 12)}, no code)`);
    expect(added.code, added.stderr).toBe(0);
    const lock = () => JSON.parse(readFileSync(path.join(dir, "lllm.lock"), "utf8")).packages[`git+${repo.url}#main:packages/greet`];
    expect(lock()).toMatchObject({ name: "greet", commit: first, resolved: repo.url, code: [] });

    const second = repo.commit({ "packages/greet/prompts/system.md": "Second.", "packages/greet/tools/run.ts": "export default {};\n" }, "two");
    const fresh = tempDir("lllm-home-");
    expect((await lllm(["install", "--frozen"], { cwd: dir, home: fresh })).code).toBe(0);
    expect((await lllm(["run", "tactic.yaml", "--model", "scripted:script.yaml", "--input", "hi", "--dry-run"], { cwd: dir, home: fresh })).stdout).toContain("First.");

    const refused = await lllm(["update", "greet"], { cwd: dir, home: fresh });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain("tools/run.ts: TypeScript, tool code");
    expect(lock().commit).toBe(first);
    const updated = await lllm(["update", "greet", "--trust"], { cwd: dir, home: fresh });
    expect(updated.code, updated.stderr).toBe(0);
    // The version is the same: the line tells the commits apart, not "(unchanged)".
    expect(updated.stderr).toContain(`: 1.0.0 (${first.slice(0, 12)}) -> 1.0.0 (${second.slice(0, 12)})`);
    expect(lock()).toMatchObject({ commit: second, code: ["tools/run.ts: TypeScript, tool code, run when the package loads"], trusted: { how: "--trust" } });
  }, 180_000);

  it("takes an annotated tag; an unknown ref, a missing sub-folder and a link in the tree are clear errors", async () => {
    const repo = gitRepository();
    const tagged = repo.commit({ "lllm.toml": '[package]\nname = "greet"\n', "prompts/system.md": "Tagged." }, "one");
    repo.tag("v1.0.0");
    const dir = project();
    const home = tempDir("lllm-home-");
    expect((await lllm(["add", `git+${repo.url}#v1.0.0`], { cwd: dir, home })).code).toBe(0);
    expect(JSON.parse(readFileSync(path.join(dir, "lllm.lock"), "utf8")).packages[`git+${repo.url}#v1.0.0`].commit).toBe(tagged);

    const unknown = await lllm(["add", `git+${repo.url}#v9`], { cwd: dir, home });
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain("has no branch or tag `v9`");
    expect(unknown.stderr).toContain("Its branches and tags: main, v1.0.0.");
    const noFolder = await lllm(["add", `git+${repo.url}#main:nothing`], { cwd: dir, home });
    expect(noFolder.code, noFolder.stderr).toBe(2);
    expect(noFolder.stderr).toContain("has no folder `nothing`");

    symlinkSync("/etc/passwd", path.join(repo.work, "prompts", "leak.md"));
    repo.commit({}, "link");
    const linked = await lllm(["add", `git+${repo.url}#main`, "--as", "linked"], { cwd: dir, home });
    expect(linked.code, linked.stderr).toBe(2);
    expect(linked.stderr).toContain("`prompts/leak.md` is a symbolic link (to `/etc/passwd`)");
    expect(cacheOf(home).other).toEqual([]);

    const missing = await lllm(["add", `git+file://${tempDir("lllm-nothing-")}/none.git`], { cwd: dir, home });
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stderr).toContain("git could not fetch file://");
    // A password in the URL is refused before git is asked (it would be written into lllm.toml), and never shown.
    const refused = await lllm(["add", "git+https://me:pw-0123456789@127.0.0.1:1/none.git"], { cwd: dir, home });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain("package source `git+https://127.0.0.1:1/none.git` was given with a password or token in its address");
    expect(refused.stderr).not.toContain("pw-0123456789");
    // The hint's ssh address is shown as written: its user is an account's name, not a credential to hide.
    expect(refused.stderr).toContain("an SSH key: git+ssh://git@host/repo.git");
  }, 180_000);
});
