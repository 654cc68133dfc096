import { existsSync } from "node:fs";
import { ConfigError, type SourceLocation } from "../../errors.js";
import { distrustFile, trustHint } from "../../config/distrust.js";
import { parsePackageSource, sourceKey, type RemoteSource } from "../../config/packageSource.js";
import { findProject, type Project } from "./findProject.js";
import { readLock, type Lock, type LockEntry } from "./lockFile.js";
import { storeFolder } from "./packageStore.js";
import { verifyInstalled, type CacheChange } from "./verifyInstalled.js";

/** A remote source resolved, offline, to its folder in the cache. */
export interface InstalledPackage {
  /** The cached folder. */
  dir: string;
  /** The lock's key for it. */
  key: string;
  entry: LockEntry;
}

export interface InstalledPackageOptions {
  /** Where the project (its lock) is looked for. */
  cwd: string;
  /** `$LLLM_HOME`, whose `packages/.store` is the cache. */
  home: string;
  /** The folder a relative tarball path is resolved against (the file that names it). */
  from?: string;
  /** Where the source was named, for messages. */
  location?: SourceLocation;
}

/** Folders checked in this process (a package reached twice is checked once). */
const checked = new Set<string>();

/**
 * The cached folder of a remote source, through the project's `lllm.lock`: never a fetch. A source the lock does
 * not have, or that is not in the cache, is a ConfigError saying to run `lllm install`; a cached folder whose files
 * no longer match the integrity the lock trusted is refused (ConfigError), naming the file that changed.
 */
export function installedPackage(text: string, options: InstalledPackageOptions): InstalledPackage {
  const source = parsePackageSource(text, { ...(options.from !== undefined ? { from: options.from } : {}), ...(options.location ? { location: options.location } : {}) });
  if (source === undefined) throw new Error(`installedPackage: \`${text}\` is a folder, not a remote source`);
  const where = options.location ? { location: options.location } : {};
  const project = findProject(options.cwd);
  const notInstalled = (why: string): ConfigError =>
    new ConfigError("package_not_installed", `package \`${text}\` is not installed: ${why}`, {
      ...where,
      hint: "Run `lllm install` in the project (it fetches what lllm.lock pins), or `lllm add " + text + "` to add it; runs never fetch packages themselves.",
    });
  if (project === undefined || !existsSync(project.lock)) throw notInstalled(`there is no lllm.lock in ${project?.dir ?? `${options.cwd} or the folders above it`}`);
  const distrust = distrustFile(project.lock);
  if (distrust !== undefined) throw new ConfigError("lock_invalid", `${project.lock} is not used: ${distrust}`, { ...where, hint: `A lock decides which code runs: keep one of your own (${trustHint(project.lock)}).` });
  const lock = readLock(project.lock);
  const found = lockEntryFor(lock, source, project);
  if (found === undefined) throw notInstalled(`${project.lock} does not lock it`);
  const dir = storeFolder(options.home, found.entry.integrity);
  if (!existsSync(dir)) throw notInstalled(`it is locked, but not in the cache (${dir})`);
  if (!checked.has(dir)) {
    const change = verifyInstalled(dir, found.entry.integrity);
    if (change !== undefined) {
      throw packageModified([{ key: found.key, change, dir }], options.location);
    }
    checked.add(dir);
  }
  return { dir, key: found.key, entry: found.entry };
}

/**
 * The refusal of cached packages whose files differ from what the lock trusted (`package_modified`, exit 2): what a
 * run says when it meets one, and what `lllm list` says after its table.
 */
export function packageModified(packages: ReadonlyArray<{ key: string; change: CacheChange; dir: string }>, location?: SourceLocation): ConfigError {
  const where = location ? { location } : {};
  const why = "lllm does not run a package whose files differ from what was trusted.";
  if (packages.length === 1) {
    const [{ key, change, dir }] = packages as [{ key: string; change: CacheChange; dir: string }];
    return new ConfigError("package_modified", `the cached package \`${key}\` no longer matches lllm.lock: ${change.file} was ${change.how} (in ${dir})`, {
      ...where,
      hint: `${why} Remove the folder (rm -rf ${dir}) and run \`lllm install\` to fetch it again.`,
    });
  }
  const each = packages.map(({ key, change }) => `\`${key}\` (${change.file} was ${change.how})`).join(", ");
  return new ConfigError("package_modified", `${packages.length} cached packages no longer match lllm.lock: ${each}`, {
    ...where,
    hint: `${why} Remove their folders (rm -rf ${packages.map(({ dir }) => dir).join(" ")}) and run \`lllm install\` to fetch them again.`,
  });
}

/**
 * The lock's entry for a source: the one under its own text; else one of the same package the text accepts
 * (`npm:weather` with no range takes the locked `npm:weather@^1.2.0`; a git URL with no ref takes the locked one).
 */
export function lockEntryFor(lock: Lock, source: RemoteSource, project: Pick<Project, "dir">): { key: string; entry: LockEntry } | undefined {
  const key = sourceKey(source, project.dir);
  const exact = lock.packages[key];
  if (exact !== undefined) return { key, entry: exact };
  for (const [other, entry] of Object.entries(lock.packages)) {
    let candidate: RemoteSource | undefined;
    try {
      candidate = parsePackageSource(other, { from: project.dir });
    } catch {
      continue;
    }
    if (candidate !== undefined && accepts(source, candidate)) return { key: other, entry };
  }
  return undefined;
}

/** Whether a source written without a version or ref accepts what another source of the same package locked. */
function accepts(wanted: RemoteSource, locked: RemoteSource): boolean {
  if (wanted.kind === "npm" && locked.kind === "npm") return wanted.range === undefined && wanted.name === locked.name;
  if (wanted.kind === "git" && locked.kind === "git") return wanted.ref === undefined && wanted.url === locked.url && wanted.subdir === locked.subdir;
  return false;
}
