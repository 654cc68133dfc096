import { closeSync, constants, fstatSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { distrustOpenFile } from "../config/distrust.js";

/**
 * Which dropped lines of a kept spool were already said, for `mergeSpool`'s keep-files mode (a reader with no log
 * it may write: its store is in memory, and every reader merges the kept files again from their start).
 *
 * Kept in the spool folder, in `dropped-said.json` (a name no spool file has): for each spool file, the byte offset
 * up to which its dropped lines were said. A spool file is only appended to, so a line before that offset is one
 * said before, one after it is new. Not in the database: in this mode there is none on disk, that is why the files
 * are kept. Not beside the store in another folder (a temp or cache folder): there it would outlive the store, and
 * be shared with whoever else reads it. The spool folder is the one place such a reader may still write: a home
 * made read-only keeps its `logs.spool/` (0700, this user's), the runs of this user still go there. Where that
 * folder is read-only too, nothing is remembered: the caller says how to clear the line instead.
 */
export const DROPPED_SAID = "dropped-said.json";

/** Per spool file name, the offset up to which its dropped lines were said. */
export type DroppedSaid = Map<string, number>;

/** What was said before (none when the file is missing, not this user's, or not what lllm writes). */
export function readDroppedSaid(folder: string): DroppedSaid {
  const said: DroppedSaid = new Map();
  const text = readOwnFile(path.join(folder, DROPPED_SAID));
  if (text === undefined) return said;
  try {
    const value = JSON.parse(text) as unknown;
    if (value === null || typeof value !== "object" || Array.isArray(value)) return said;
    for (const [name, offset] of Object.entries(value)) if (typeof offset === "number" && Number.isSafeInteger(offset) && offset >= 0) said.set(name, offset);
  } catch {
    // Damaged: the lines are said again, once, and the file made anew.
  }
  return said;
}

/**
 * Remember `said`, for the spool files still there (`names`): undefined when it is, else why not. Written whole
 * under another name first, then renamed over the last: two readers at once leave one or the other, never a mix.
 */
export function saveDroppedSaid(folder: string, said: DroppedSaid, names: readonly string[]): string | undefined {
  const kept = Object.fromEntries(names.filter((name) => said.has(name)).map((name) => [name, said.get(name)]));
  const file = path.join(folder, DROPPED_SAID);
  const draft = `${file}.${process.pid}`;
  try {
    // `wx`: a name that is already there (a link) is not written through.
    writeFileSync(draft, `${JSON.stringify(kept)}\n`, { flag: "wx", mode: 0o600 });
    renameSync(draft, file);
    return undefined;
  } catch (error) {
    try {
      unlinkSync(draft);
    } catch {
      // Never made.
    }
    const code = (error as NodeJS.ErrnoException).code;
    return code === "EACCES" || code === "EPERM" || code === "EROFS" ? `${folder} is read-only to you` : (error as Error).message;
  }
}

/** Forget it all: a reader that may write the log merges each file once (its offsets are in the database). */
export function forgetDroppedSaid(folder: string): void {
  try {
    unlinkSync(path.join(folder, DROPPED_SAID));
  } catch {
    // None (the usual case), or not ours to remove.
  }
}

/** The text of a file of this user's (not through a link, not a FIFO), or undefined. */
function readOwnFile(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    // Another user's file must not silence what this user is told about their own runs.
    if (!stat.isFile() || distrustOpenFile(stat, file) !== undefined) return undefined;
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}
