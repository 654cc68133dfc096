import { readFileSync } from "node:fs";
import path from "node:path";
import { realOrResolved } from "../../util/realPath.js";
import type { FileDigest } from "./filesIntegrity.js";
import type { LockTrust } from "./lockFile.js";

/**
 * The content-addressed cache of fetched packages: `$LLLM_HOME/packages/.store/<hex of the files' sha512>/`, each
 * folder beside a record (`<hex>.json`) of its file digests and the stamp (sizes, times, inodes) they were checked
 * at. The folder starts with a dot, so the discovery of `$LLLM_HOME/packages/*` never loads a cached package by
 * itself: only a lock that names it does.
 */
export function storeRoot(home: string): string {
  return path.join(home, "packages", ".store");
}

/**
 * The cached package folder `file` lies in (links resolved), or undefined for a file elsewhere: a tactic there keeps
 * its paths inside that folder (see `confinementProblem`).
 */
export function installedFolderOf(file: string, home: string): string | undefined {
  const root = realOrResolved(storeRoot(home));
  const relative = path.relative(root, realOrResolved(file));
  if (relative === "" || relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) return undefined;
  return path.join(root, relative.split(path.sep)[0]!);
}

/** The folder of the package whose files have `integrity` (`sha512-<base64>`). */
export function storeFolder(home: string, integrity: string): string {
  return path.join(storeRoot(home), integrityHex(integrity));
}

/** The record beside a package folder. */
export function storeRecordFile(folder: string): string {
  return `${folder}.json`;
}

/** `sha512-<base64>` as hexadecimal (a folder name that no file system folds or refuses). */
export function integrityHex(integrity: string): string {
  const base64 = integrity.startsWith("sha512-") ? integrity.slice(7) : integrity;
  return Buffer.from(base64, "base64").toString("hex");
}

/** What is known of one cached file when it was last checked: the stamp that says it has not changed since. */
export type FileStamp = [path: string, size: number, mtimeMs: number, ctimeMs: number, ino: number];

/** The record of a cached package. */
export interface StoreRecord {
  integrity: string;
  files: FileDigest[];
  stamp: FileStamp[];
  /** Who accepted the package's code in this home (absent when it carries none). */
  trusted?: LockTrust;
}

/** The record of a cached package, or undefined when it is missing or unreadable (then the files are hashed again). */
export function readStoreRecord(folder: string): StoreRecord | undefined {
  try {
    const data = JSON.parse(readFileSync(storeRecordFile(folder), "utf8")) as Partial<StoreRecord>;
    if (typeof data.integrity !== "string" || !Array.isArray(data.files) || !Array.isArray(data.stamp)) return undefined;
    return data as StoreRecord;
  } catch {
    return undefined;
  }
}
