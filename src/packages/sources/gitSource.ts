import type { GitSource } from "../../config/packageSource.js";
import type { LockEntry } from "../../registry/installed/lockFile.js";
import type { Fetched, FetchContext } from "./fetchSource.js";

export async function fetchGit(source: GitSource, context: FetchContext, locked?: LockEntry): Promise<Fetched> {
  void context;
  void locked;
  throw new Error(`git sources are not built yet: ${source.text}`);
}
