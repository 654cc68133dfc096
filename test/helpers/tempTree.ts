import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** Folders made by `tempDir`/`tempTree` in this test file; test/helpers/setup.ts removes them after the file. */
const created = new Set<string>();

/**
 * A fresh folder under the run's private TMPDIR, removed after the test file (see setup.ts). Call
 * `removeTempDir` to remove it sooner. The path is resolved (realpath), as the product reports resolved paths.
 */
export function tempDir(prefix = "lllm-test-"): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
  created.add(dir);
  return dir;
}

/** Write `files` (relative path → text) into a fresh `tempDir`; returns the folder. */
export function tempTree(files: Record<string, string>, prefix = "lllm-tree-"): string {
  const dir = tempDir(prefix);
  writeTree(dir, files);
  return dir;
}

/** Write `files` (relative path → text) under `dir`, creating sub-folders as needed. */
export function writeTree(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}

/** Remove one folder made by `tempDir` now. */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  created.delete(dir);
}

/** Remove every folder made by `tempDir` in this file (registered in setup.ts, so no test needs to call it). */
export function removeTempDirs(): void {
  for (const dir of created) rmSync(dir, { recursive: true, force: true });
  created.clear();
}
