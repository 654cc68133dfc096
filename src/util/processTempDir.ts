import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { processAlive } from "./processAlive.js";

/** The prefixes whose orphaned folders this process has removed already (once each). */
const swept = new Set<string>();

/**
 * A new private folder in the temp dir, named `<prefix><pid>-XXXXXX` after this process, so that a later lllm can
 * tell whose it was. Before the first one of a prefix, the folders of that prefix left by processes that are gone
 * are removed: a process killed with SIGKILL (a CI time limit, the OOM killer) never reaches its own cleanup.
 * Best effort: a pid reused by another program keeps its folder until a later sweep; another user's folder is left.
 */
export function processTempDir(prefix: string): string {
  if (!swept.has(prefix)) {
    swept.add(prefix);
    removeOrphans(prefix);
  }
  return mkdtempSync(path.join(tmpdir(), `${prefix}${process.pid}-`));
}

function removeOrphans(prefix: string): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  const owned = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(\\d+)-`);
  for (const name of names) {
    const owner = Number(owned.exec(name)?.[1]);
    if (!owner || owner === process.pid || processAlive(owner)) continue;
    try {
      rmSync(path.join(tmpdir(), name), { recursive: true, force: true });
    } catch {
      // another user's: not ours to remove
    }
  }
}
