import { chmodSync, lstatSync, mkdirSync, type Stats } from "node:fs";

/**
 * `folder`, created readable by this user alone, when it is safe to keep cached code or data in: a folder of this
 * user's own that no one else can write to. A cache another local user could write to (a shared or loosened
 * `$LLLM_HOME/cache`, a folder someone else made first) could plant code or config lllm would then trust, so such a
 * folder is not used: `undefined`, and lllm works without the cache.
 */
export function privateFolder(folder: string | undefined): string | undefined {
  if (folder === undefined) return undefined;
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const stat = lstatSync(folder);
    if (!stat.isDirectory() || !isOwn(stat) || (stat.mode & 0o022) !== 0) return undefined;
    return folder;
  } catch {
    return undefined;
  }
}

/**
 * Make `folder` (and the missing folders above it) readable by this user alone, and tighten an existing one of ours
 * that others can read (a home made 0755 by hand or by an older lllm). Unlike `privateFolder` it is for what lllm
 * writes and others must not read (the run store), not for what it trusts: a folder of someone else's is used as
 * it is. Throws what `mkdir` throws.
 */
export function makePrivateFolder(folder: string): void {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  tightenPrivate(folder, 0o700);
}

/** Take the group and other bits off `target` (keeping at most `most`) when it is ours; a link or another's is left. */
export function tightenPrivate(target: string, most: number): void {
  try {
    const stat = lstatSync(target);
    if (!isOwn(stat)) return;
    if ((stat.mode & 0o077) !== 0 && !stat.isSymbolicLink()) chmodSync(target, stat.mode & most);
  } catch {
    // Missing (a -wal not yet made) or not ours to change: opening it says what is wrong, if anything.
  }
}

/** Whether this user owns the file (always, where there are no user ids). */
function isOwn(stat: Stats): boolean {
  const uid = process.getuid?.();
  return uid === undefined || stat.uid === uid;
}
