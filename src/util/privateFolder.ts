import { lstatSync, mkdirSync } from "node:fs";

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
    const uid = process.getuid?.();
    if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o022) !== 0) return undefined;
    return folder;
  } catch {
    return undefined;
  }
}
