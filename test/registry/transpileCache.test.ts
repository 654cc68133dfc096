import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.js";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

describe("the transpile cache of TypeScript package files", () => {
  it("lives in $LLLM_HOME/cache/jiti, readable by this user alone, never in the shared temp folder", async () => {
    const home = tempDir("lllm-home-");
    const temp = tempDir("lllm-tmp-");
    const pkg = tempDir("lllm-pkg-");
    mkdirSync(path.join(pkg, "tools"));
    writeFileSync(path.join(pkg, "lllm.yaml"), "name: cached\nversion: 0.1.0\n");
    writeFileSync(
      path.join(pkg, "tools", "shout_cached.ts"),
      'import { tool } from "lllm";\nexport default tool({ name: "shout_cached", description: "Shout", parameters: { text: { type: "string" } }, run: ({ text }: { text: string }) => text.toUpperCase() });\n',
    );
    // TMPDIR points the child's os.tmpdir() (jiti's default cache folder) at a folder this test can look into.
    const result = await runCli(["tools", "list", "-p", pkg], { env: { LLLM_HOME: home, TMPDIR: temp }, timeoutMs: 90_000 });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("shout_cached");

    const cache = path.join(home, "cache", "jiti");
    expect(readdirSync(cache).some((name) => name.includes("shout_cached"))).toBe(true);
    expect(statSync(cache).mode & 0o077).toBe(0);
    const shared = path.join(temp, "jiti");
    expect(existsSync(shared) ? readdirSync(shared).filter((name) => name.includes("shout_cached")) : []).toEqual([]);
  });
});
