import { readdirSync } from "node:fs";
import path from "node:path";
import { tightenPrivate } from "../util/privateFolder.js";

/**
 * The files of a run store and who may read them. The store holds transcripts (prompts, answers, tool results), so
 * everything lllm writes for it is this user's alone: folders 0700, files 0600, whatever the umask. An existing
 * folder or file of this user's that others can read (a home made 0755 by hand or by an older lllm, a log made 0644)
 * is tightened when the store is next written (`makePrivateFolder`); one that belongs to someone else is left as it
 * is (lllm's own files in it are still 0600).
 */

/** `logs.spool/` beside `logs.db`: the files runs are appended to before they are merged into the database. */
export function spoolFolder(file: string): string {
  return path.join(path.dirname(file), `${path.basename(file, ".db")}.spool`);
}

/** The names of the spool's files (none when the folder does not exist or cannot be read). */
export function spoolFiles(folder: string): string[] {
  try {
    return readdirSync(folder)
      .filter((name) => SPOOL_FILE.test(name))
      .sort();
  } catch {
    return [];
  }
}

/** `<ULID>-<pid>.jsonl`: sorted by name, files are in the order they were begun. */
export const SPOOL_FILE = /^[0-9A-Z]{26}-\d+\.jsonl$/;

/** Tighten a file of the store (and, for the database, its `-wal` and `-shm`) to 0600 when it is ours and others can read it. */
export function privateStoreFile(file: string, companions: readonly string[] = []): void {
  for (const name of [file, ...companions.map((suffix) => file + suffix)]) tightenPrivate(name, 0o600);
}
