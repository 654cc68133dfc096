import { existsSync } from "node:fs";
import { isRemoteSource, parsePackageSource, sourceKey } from "../config/packageSource.js";
import type { ConfigError } from "../errors.js";
import { packageModified } from "../registry/installed/installedPackage.js";
import { storeFolder } from "../registry/installed/packageStore.js";
import { verifyInstalled, type CacheChange } from "../registry/installed/verifyInstalled.js";
import { openProject } from "./projectPackages.js";

/** One package of the project, as `lllm list` shows it. */
export interface ListedPackage {
  /** The name refs use: the alias, else the package's own name. */
  name: string;
  source: string;
  /** The version, the commit or the digest it is locked at. */
  version?: string;
  /** The files of code it carries. */
  code: string[];
  /** Who trusted its code, and how (`root (--trust)`); absent when it has none. */
  trustedBy?: string;
  /** `installed`, `not installed`, `not locked`, or what changed in the cache. */
  state: string;
  /** The package that depends on it, for a dependency of a dependency. */
  dependencyOf?: string;
  /** What changed in the cache since it was trusted (runs refuse it), and the cached folder to remove. */
  modified?: CacheChange & { folder: string };
}

/** The project's packages (the manifest's remote dependencies and theirs), from the lock and the cache; no network. */
export async function listPackages(options: { cwd: string; home: string }): Promise<ListedPackage[]> {
  const { project, lock, dependencies } = await openProject(options.cwd);
  const rows: ListedPackage[] = [];
  const seen = new Set<string>();
  const add = (key: string, name: string | undefined, dependencyOf: string | undefined): void => {
    const entry = lock.packages[key];
    if (entry === undefined) {
      rows.push({ name: name ?? key, source: key, code: [], state: "not locked (run `lllm install`)", ...(dependencyOf ? { dependencyOf } : {}) });
      return;
    }
    const folder = storeFolder(options.home, entry.integrity);
    const change = existsSync(folder) ? verifyInstalled(folder, entry.integrity) : undefined;
    const state = !existsSync(folder) ? "not installed (run `lllm install`)" : change !== undefined ? `modified: ${change.file} ${change.how} (refused)` : "installed";
    const version = entry.version ?? (entry.commit ? entry.commit.slice(0, 12) : entry.digest ? entry.digest.slice(0, 19) : undefined);
    rows.push({
      name: name ?? entry.name,
      source: key,
      ...(version !== undefined ? { version } : {}),
      code: entry.code,
      ...(entry.trusted ? { trustedBy: `${entry.trusted.by} (${entry.trusted.how})` } : {}),
      state,
      ...(dependencyOf ? { dependencyOf } : {}),
      ...(change !== undefined ? { modified: { ...change, folder } } : {}),
    });
    if (seen.has(key)) return;
    seen.add(key);
    for (const dependency of entry.dependencies ?? []) add(dependency, undefined, name ?? entry.name);
  };
  for (const dependency of dependencies) {
    if (!isRemoteSource(dependency.path)) continue;
    add(sourceKey(parsePackageSource(dependency.path, { from: project.dir, location: dependency.location })!, project.dir), dependency.alias, undefined);
  }
  return rows;
}

/**
 * The refusal `lllm list` ends with when a listed package was modified in the cache (the error a run that uses it
 * meets, `package_modified`), or undefined when none was. A package listed twice (a dependency of two) counts once.
 */
export function modifiedPackagesError(rows: readonly ListedPackage[]): ConfigError | undefined {
  const modified = new Map<string, { key: string; change: CacheChange; dir: string }>();
  for (const row of rows) {
    if (row.modified === undefined || modified.has(row.source)) continue;
    const { folder, ...change } = row.modified;
    modified.set(row.source, { key: row.source, change, dir: folder });
  }
  return modified.size === 0 ? undefined : packageModified([...modified.values()]);
}
