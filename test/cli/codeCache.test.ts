import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import Module from "node:module";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { EXAMPLE, runCli } from "../helpers/runCli.js";
import { tempDir } from "../helpers/tempTree.js";

// The CLI is spawned several times: on a busy machine more than the default 30 s.
vi.setConfig({ testTimeout: 120_000 });

// On Node before 22.1 (no compile cache of its own) the CLI keeps V8's compiled code of its one-file
// dependencies in $LLLM_HOME/cache/v8. What a user must see: the same results, whatever state that folder is in.
const dir = tempDir("lllm-code-cache-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const nodeHasCompileCache = typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === "function";

describe("the code cache of lllm's dependencies", () => {
  it(nodeHasCompileCache ? "is left to Node's own compile cache on this Node, kept in $LLLM_HOME" : "is kept, reused, and survives damaged data", async () => {
    const home = path.join(dir, "home");
    const folder = path.join(home, "cache", "v8");
    const validate = () => runCli(["validate", path.join(EXAMPLE, "weather", "tactics", "weather.yaml")], { env: { LLLM_HOME: home } });
    const first = await validate();
    expect(first.code).toBe(0);
    if (nodeHasCompileCache) {
      expect(existsSync(folder)).toBe(false);
      // Node's own cache, in a folder of this user's own rather than the shared temp folder.
      const node = path.join(home, "cache", "node");
      expect(readdirSync(node).length).toBeGreaterThan(0);
      expect(statSync(node).mode & 0o077).toBe(0);
      return;
    }
    expect(existsSync(path.join(home, "cache", "node"))).toBe(false);
    const files = readdirSync(folder);
    expect(files.length).toBeGreaterThan(0);
    expect(await validate()).toEqual(first);
    // Data V8 rejects (here: not its format at all) is compiled again and written anew.
    for (const file of files) writeFileSync(path.join(folder, file), "not code");
    expect(await validate()).toEqual(first);
    expect(readdirSync(folder).sort()).toEqual(files.sort());
  });
});
