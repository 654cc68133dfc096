import { renameSync, writeFileSync } from "node:fs";
import { LOCKFILE_VERSION, type Lock, type LockEntry } from "../registry/installed/lockFile.js";

/** The order of an entry's keys in the file: what it is, where from, what was trusted. */
const KEY_ORDER: Array<keyof LockEntry> = ["name", "version", "resolved", "commit", "digest", "tarball", "integrity", "code", "trusted", "dependencies"];

/** Write `lllm.lock`: sources sorted, keys in a fixed order, so that a change reads as a small diff. One rename. */
export function writeLock(file: string, lock: Lock): void {
  const packages: Record<string, Partial<LockEntry>> = {};
  for (const key of Object.keys(lock.packages).sort()) {
    const entry = lock.packages[key]!;
    const ordered: Record<string, unknown> = {};
    for (const name of KEY_ORDER) if (entry[name] !== undefined) ordered[name] = entry[name];
    packages[key] = ordered as Partial<LockEntry>;
  }
  const temporary = `${file}.tmp-${process.pid}`;
  writeFileSync(temporary, `${JSON.stringify({ lockfileVersion: LOCKFILE_VERSION, packages }, null, 2)}\n`);
  renameSync(temporary, file);
}
