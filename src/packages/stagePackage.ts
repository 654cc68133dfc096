import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "../errors.js";
import { isRemoteSource } from "../config/packageSource.js";
import { readManifest, type DependencySpec } from "../registry/manifest.js";
import { filesIntegrity, listPackageFiles, UnexpectedEntry, type FileDigest } from "../registry/installed/filesIntegrity.js";
import { storeFolder, storeRoot } from "../registry/installed/packageStore.js";
import type { LockTrust } from "../registry/installed/lockFile.js";
import { writeStoreRecord } from "../registry/installed/verifyInstalled.js";
import { processAlive } from "../util/processAlive.js";
import { makePrivateFolder } from "../util/privateFolder.js";
import { escapesFolder } from "../config/packageConfinement.js";
import { codeOf } from "./codeOf.js";

/** A package unpacked into a staging folder of the cache and checked, waiting to be committed (or discarded). */
export interface StagedPackage {
  /** The staging folder (while staged), then the cache folder. */
  dir: string;
  integrity: string;
  files: FileDigest[];
  /** What code it carries (see codeOf); empty: none. */
  code: string[];
  name: string;
  version?: string;
  /** Its manifest's dependencies that are remote sources (folders inside it need no fetching). */
  dependencies: DependencySpec[];
  /** Already in the cache (a package with the same files was fetched before). */
  cached: boolean;
  /** It has a manifest of lllm's (lllm.toml, lllm.yaml, or package.json with an `lllm` key). */
  hasManifest: boolean;
}

/** A fresh staging folder in the cache (on its file system, so that committing is a rename). */
export function stagingFolder(home: string): string {
  const root = storeRoot(home);
  makePrivateFolder(root);
  removeDeadStaging(root);
  const dir = path.join(root, `.staging-${process.pid}-${Math.random().toString(36).slice(2, 10)}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/**
 * Look at an unpacked package: its files' integrity (checked against `expected`, the lock's, when given), the code
 * it carries and its manifest. Nothing of it runs. A mismatch with the lock is a ConfigError that says which
 * integrity was expected and which was found; the staging folder is removed on any error.
 */
export async function inspectStaged(dir: string, options: { home: string; label: string; defaultName: string; expected?: string }): Promise<StagedPackage> {
  try {
    let integrity: ReturnType<typeof filesIntegrity>;
    try {
      integrity = filesIntegrity(dir);
    } catch (error) {
      if (error instanceof UnexpectedEntry) throw new ConfigError("package_archive_invalid", `${options.label}: ${error.message}: packages may hold plain files only`, { hint: "Remove links from the package (copy the file in instead)." });
      throw error;
    }
    if (options.expected !== undefined && integrity.integrity !== options.expected) {
      throw new ConfigError("package_integrity_mismatch", `${options.label}: its files do not match lllm.lock (the lock has ${options.expected.slice(0, 23)}…, the fetched files are ${integrity.integrity.slice(0, 23)}…)`, {
        hint: "Either the package changed at its source under the same version, or lllm.lock was edited. Nothing was installed. If the change is expected, run `lllm update NAME` to lock the new files (it shows their code first).",
      });
    }
    const manifest = await readManifest(dir, { defaultName: options.defaultName });
    // A folder outside the package would not come with it, and its code would run unseen: refused, not left out.
    const outside = manifest.dependencies.find((dependency) => !isRemoteSource(dependency.path) && escapesFolder("package", path.resolve(dir, dependency.path), dir));
    if (outside !== undefined) {
      throw new ConfigError("package_invalid", `${options.label}: its manifest depends on \`${outside.path}\`, a folder outside the package, which an installed package cannot use; nothing was installed`, { hint: "Ask its author to depend on that package by its source (npm:NAME@RANGE, oci://…, git+https://…); `lllm pack` refuses such a dependency." });
    }
    const dependencies = manifest.dependencies.filter((dependency) => isRemoteSource(dependency.path));
    const cached = existsSync(storeFolder(options.home, integrity.integrity));
    return { dir, integrity: integrity.integrity, files: integrity.files, code: codeOf(dir), name: manifest.name, ...(manifest.version !== undefined ? { version: manifest.version } : {}), dependencies, cached, hasManifest: manifest.file !== undefined };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Move a staged package into the cache under its integrity: its files made read-only (a cached package is not
 * edited in place), their stamp recorded, then one rename, so the cache never holds half a package. A package
 * already cached stays as it is and the staging folder is removed.
 */
export function commitStaged(staged: StagedPackage, home: string, trusted?: LockTrust): string {
  const target = storeFolder(home, staged.integrity);
  if (existsSync(target)) {
    rmSync(staged.dir, { recursive: true, force: true });
    return target;
  }
  for (const relative of listPackageFiles(staged.dir)) {
    const file = path.join(staged.dir, ...relative.split("/"));
    const executable = staged.files.find((item) => item.path === relative)?.executable ?? false;
    chmodSync(file, executable ? 0o555 : 0o444);
  }
  chmodSync(staged.dir, 0o755);
  try {
    renameSync(staged.dir, target);
  } catch (error) {
    // Another lllm committed the same package meanwhile: theirs is the same files.
    if (existsSync(target)) {
      rmSync(staged.dir, { recursive: true, force: true });
      return target;
    }
    throw error;
  }
  writeStoreRecord(target, { integrity: staged.integrity, files: staged.files, ...(trusted !== undefined ? { trusted } : {}) });
  return target;
}

/** Staging folders left by an lllm that died (its process is gone). */
function removeDeadStaging(root: string): void {
  for (const name of readdirSync(root)) {
    const match = /^\.staging-(\d+)-/.exec(name);
    if (match && !processAlive(Number(match[1]))) rmSync(path.join(root, name), { recursive: true, force: true });
  }
}
