import { lstatSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileDigest, integrityOfListing, listPackageFiles, UnexpectedEntry, type FileDigest } from "./filesIntegrity.js";
import { readStoreRecord, storeRecordFile, type FileStamp, type StoreRecord } from "./packageStore.js";

/** What changed in a cached package: a file's path and how. */
export interface CacheChange {
  file: string;
  how: "changed" | "added" | "removed" | "not a plain file";
}

/**
 * Check a cached package against the integrity the lock trusted. Cheap when nothing changed: the folder is listed
 * and each file's size, times and inode compared with the stamp of the last check; only when the stamp differs are
 * the files hashed again (and the stamp renewed when they still match). Returns the first change found, or
 * undefined when the files match.
 */
export function verifyInstalled(folder: string, integrity: string): CacheChange | undefined {
  const record = readStoreRecord(folder);
  const known = record !== undefined && record.integrity === integrity && integrityOfListing(record.files) === integrity ? record : undefined;
  let files: string[];
  try {
    files = listPackageFiles(folder);
  } catch (error) {
    if (error instanceof UnexpectedEntry) return { file: error.relative, how: "not a plain file" };
    throw error;
  }
  if (known !== undefined && stampMatches(folder, files, known.stamp)) return undefined;
  const change = compareDigests(folder, files, known?.files);
  if (change !== undefined) return change;
  if (known === undefined) {
    // No record to name a file by: hash everything and compare the whole.
    const digests = files.map((relative) => digestOf(folder, relative));
    if (integrityOfListing(digests) !== integrity) return { file: files[0] ?? ".", how: "changed" };
    renewRecord(folder, { integrity, files: digests });
    return undefined;
  }
  renewRecord(folder, { integrity, files: known.files, ...(known.trusted !== undefined ? { trusted: known.trusted } : {}) });
  return undefined;
}

/** Write the record of a package folder whose files were just checked: its digests and their stamp now. */
export function writeStoreRecord(folder: string, record: Omit<StoreRecord, "stamp">): void {
  const stamp = record.files.map((file) => stampOf(folder, file.path));
  const target = storeRecordFile(folder);
  const temporary = `${target}.tmp-${process.pid}`;
  writeFileSync(temporary, `${JSON.stringify({ ...record, stamp })}\n`, { mode: 0o600 });
  renameSync(temporary, target);
}

/** The stamp renewed after a check; a home lllm cannot write to only means the files are hashed again next time. */
function renewRecord(folder: string, record: Omit<StoreRecord, "stamp">): void {
  try {
    writeStoreRecord(folder, record);
  } catch {
    // read-only home: nothing to renew
  }
}

function stampOf(folder: string, relative: string): FileStamp {
  const stat = lstatSync(path.join(folder, ...relative.split("/")));
  return [relative, stat.size, stat.mtimeMs, stat.ctimeMs, stat.ino];
}

function stampMatches(folder: string, files: string[], stamp: FileStamp[]): boolean {
  if (files.length !== stamp.length) return false;
  return stamp.every((entry, index) => {
    if (files[index] !== entry[0]) return false;
    const now = stampOf(folder, entry[0]);
    return now[1] === entry[1] && now[2] === entry[2] && now[3] === entry[3] && now[4] === entry[4];
  });
}

/** The first file that differs from the recorded digests (or undefined when all match, or nothing is recorded). */
function compareDigests(folder: string, files: string[], recorded: FileDigest[] | undefined): CacheChange | undefined {
  if (recorded === undefined) return undefined;
  const byPath = new Map(recorded.map((file) => [file.path, file]));
  for (const relative of files) {
    const expected = byPath.get(relative);
    if (expected === undefined) return { file: relative, how: "added" };
    const actual = digestOf(folder, relative);
    if (actual.sha512 !== expected.sha512 || actual.executable !== expected.executable) return { file: relative, how: "changed" };
  }
  const present = new Set(files);
  const removed = recorded.find((file) => !present.has(file.path));
  return removed === undefined ? undefined : { file: removed.path, how: "removed" };
}

function digestOf(folder: string, relative: string): FileDigest {
  const file = path.join(folder, ...relative.split("/"));
  return { path: relative, sha512: fileDigest(file), executable: (lstatSync(file).mode & 0o111) !== 0 };
}
