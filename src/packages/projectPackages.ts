import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "../errors.js";
import { distrustFile, trustHint } from "../config/distrust.js";
import { isRemoteSource, parsePackageSource, sourceKey } from "../config/packageSource.js";
import { readManifest, type DependencySpec } from "../registry/manifest.js";
import { findProject, type Project } from "../registry/installed/findProject.js";
import { emptyLock, LOCK_FILE, readLock, type Lock, type LockEntry } from "../registry/installed/lockFile.js";
import type { ConsentOptions } from "./consent.js";
import { PackageInstaller } from "./PackageInstaller.js";
import { projectDependencies, writeProjectDependencies, type ManifestDependency } from "./projectManifest.js";
import { writeLock } from "./writeLock.js";

export interface ProjectOptions {
  cwd: string;
  home: string;
  consent: ConsentOptions;
  report: (line: string) => void;
}

/** A project's manifest dependencies and lock, as they are on disk. */
export interface OpenedProject {
  project: Project;
  lock: Lock;
  dependencies: DependencySpec[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** The project of `cwd` (its folder when there is none yet), with its dependencies and lock. */
export async function openProject(cwd: string, options: { create?: boolean } = {}): Promise<OpenedProject> {
  const found = findProject(cwd);
  if (found === undefined && options.create !== true) {
    throw new ConfigError("lock_invalid", `no project here: neither ${cwd} nor a folder above it has an lllm.toml, lllm.yaml or lllm.lock`, { hint: "Add a package first (`lllm add npm:NAME`), which makes an lllm.toml and an lllm.lock in this folder." });
  }
  const project = found ?? { dir: path.resolve(cwd), lock: path.join(path.resolve(cwd), LOCK_FILE) };
  // As a run refuses it (installedPackage): a lock of another user's (or one anyone may write) would decide what is
  // fetched and trusted here, `lllm list` would call packages installed that no run uses, and a write would land in it.
  const distrust = existsSync(project.lock) ? distrustFile(project.lock) : undefined;
  if (distrust !== undefined) throw new ConfigError("lock_invalid", `${project.lock} is not used: ${distrust}`, { location: { file: project.lock }, hint: `A lock decides which code runs: keep one of your own (${trustHint(project.lock)}).` });
  return { project, lock: existsSync(project.lock) ? readLock(project.lock) : emptyLock(), dependencies: await projectDependencies(project) };
}

/** The lock key of a manifest dependency, or undefined for a folder. */
function keyOf(dependency: DependencySpec, project: Project): string | undefined {
  if (!isRemoteSource(dependency.path)) return undefined;
  return sourceKey(parsePackageSource(dependency.path, { from: project.dir, location: dependency.location })!, project.dir);
}

/**
 * `lllm add SOURCE [--as ALIAS]`: fetch the source (and its dependencies) into the cache, asking consent for any
 * code, then record it in the manifest and lllm.lock. An npm source without a range is recorded as `^VERSION`.
 */
export async function addPackage(text: string, alias: string | undefined, options: ProjectOptions): Promise<{ source: string; alias?: string; entry: LockEntry; manifest: string; lock: string }> {
  const { project, lock, dependencies } = await openProject(options.cwd, { create: true });
  if (alias !== undefined && !NAME.test(alias)) throw new ConfigError("package_alias_taken", `\`${alias}\` is not a valid alias`, { hint: "An alias is letters, digits, `_` and `-`, starting with a letter or `_` (it is the package's name in refs)." });
  const parsed = parsePackageSource(text, { from: options.cwd, location: { file: "lllm add" } });
  // Not a source to fetch: a folder (said so), or nothing that exists (`./nothing`, `foo:bar`).
  const what = existsSync(path.resolve(options.cwd, text)) ? "is a folder" : "is not a package source (nor a folder or file here)";
  if (parsed === undefined) throw new ConfigError("package_source_invalid", `\`${text}\` ${what}: \`lllm add\` takes a package to fetch`, { hint: "Write npm:NAME[@RANGE], git+URL[#REF][:SUBDIR], oci://REGISTRY/REPO:TAG, an https:// tarball URL or a .tgz file; list folders in the manifest's dependencies yourself." });
  const written = parsed.kind === "tarball" && parsed.file !== undefined ? path.relative(project.dir, parsed.file).split(path.sep).join("/") : text;
  const installer = new PackageInstaller({ project: project, home: options.home, lock, consent: options.consent, report: options.report });
  try {
    const installed = await installer.install(written, { pinned: false });
    let source = written;
    if (parsed.kind === "npm" && parsed.range === undefined && installed.entry.version !== undefined && /^\d+\.\d+\.\d+$/.test(installed.entry.version)) {
      source = `npm:${parsed.name}@^${installed.entry.version}`;
      delete installer.lock.packages[installed.key];
      installer.lock.packages[source] = installed.entry;
    }
    const sourceKeyNow = sourceKey(parsePackageSource(source, { from: project.dir })!, project.dir);
    const kept = dependencies.filter((dependency) => keyOf(dependency, project) !== sourceKeyNow && keyOf(dependency, project) !== installed.key);
    const next: ManifestDependency[] = [...kept.map((dependency) => ({ source: dependency.path, ...(dependency.alias !== undefined ? { alias: dependency.alias } : {}) })), { source, ...(alias !== undefined ? { alias } : {}) }];
    carryOver(lock, installer.lock, kept.map((dependency) => keyOf(dependency, project)).filter((key): key is string => key !== undefined));
    const names = await checkNames(next, installer.lock, project, { added: source });
    const before = [project.lock, project.manifest ?? path.join(project.dir, "lllm.toml")].map((file) => ({ file, text: existsSync(file) ? readFileSync(file) : undefined }));
    writeLock(project.lock, installer.lock);
    const manifest = writeProjectDependencies(project, next, names);
    try {
      await checkTreeNames(project.dir, options.home, alias ?? installed.entry.name, source);
    } catch (error) {
      // As it was: a project that a run could not load is not left behind.
      for (const { file, text } of before) text === undefined ? rmSync(file, { force: true }) : writeFileSync(file, text);
      throw error;
    }
    return { source, ...(alias !== undefined ? { alias } : {}), entry: installed.entry, manifest, lock: project.lock };
  } finally {
    installer.close();
  }
}

/**
 * `lllm install [--frozen]`: everything the manifest lists, as lllm.lock pins it, into the cache (what is cached and
 * unchanged is not fetched). A dependency the lock lacks is resolved and locked; `--frozen` instead fails when the
 * manifest and the lock disagree, and never writes the lock.
 */
export async function installPackages(frozen: boolean, options: ProjectOptions): Promise<{ installed: number; fetched: number; lock: string }> {
  const { project, lock, dependencies } = await openProject(options.cwd);
  const remote = dependencies.filter((dependency) => keyOf(dependency, project) !== undefined);
  if (frozen) {
    const problems = remote.filter((dependency) => lock.packages[keyOf(dependency, project)!] === undefined).map((dependency) => ({
      message: `the manifest lists \`${dependency.path}\`, which ${path.basename(project.lock)} does not lock`,
      location: dependency.location,
      hint: "Run `lllm install` (without --frozen) and commit lllm.lock with the manifest.",
    }));
    const reachable = reachableKeys(lock, remote.map((dependency) => keyOf(dependency, project)!));
    for (const key of Object.keys(lock.packages)) {
      if (!reachable.has(key)) problems.push({ message: `${path.basename(project.lock)} locks \`${key}\`, which the manifest no longer lists`, location: { file: project.lock }, hint: "Run `lllm install` (without --frozen) and commit lllm.lock with the manifest." });
    }
    if (problems.length > 0) throw ConfigError.fromProblems("lock_out_of_date", problems);
  }
  const installer = new PackageInstaller({ project, home: options.home, lock, consent: options.consent, report: options.report });
  let fetched = 0;
  try {
    for (const dependency of remote) {
      const result = await installer.install(dependency.path, { pinned: true });
      if (result.fetched) fetched += 1;
    }
  } finally {
    installer.close();
  }
  if (!frozen && JSON.stringify(sorted(installer.lock)) !== JSON.stringify(sorted(lock))) writeLock(project.lock, installer.lock);
  return { installed: Object.keys(installer.lock.packages).length, fetched, lock: project.lock };
}

/** `lllm remove NAME`: out of the manifest and the lock (the cache keeps the files: other projects may use them). */
export async function removePackage(name: string, options: Pick<ProjectOptions, "cwd">): Promise<{ source: string; manifest: string; lock: string }> {
  const { project, lock, dependencies } = await openProject(options.cwd);
  const target = findDependency(name, dependencies, lock, project);
  const kept = dependencies.filter((dependency) => dependency !== target);
  const next = emptyLock();
  carryOver(lock, next, kept.map((dependency) => keyOf(dependency, project)).filter((key): key is string => key !== undefined));
  writeLock(project.lock, next);
  const manifest = writeProjectDependencies(project, kept.map((dependency) => ({ source: dependency.path, ...(dependency.alias !== undefined ? { alias: dependency.alias } : {}) })));
  return { source: target.path, manifest, lock: project.lock };
}

/**
 * `lllm update [NAME]`: resolve the named dependency (or every one) again within its range or ref and lock what it
 * gives now; code that is new or changed is shown and needs consent again. The others stay as locked.
 */
export async function updatePackages(name: string | undefined, options: ProjectOptions): Promise<Array<{ source: string; from?: string; to?: string; changed: boolean }>> {
  const { project, lock, dependencies } = await openProject(options.cwd);
  const remote = dependencies.filter((dependency) => keyOf(dependency, project) !== undefined);
  const chosen = name === undefined ? remote : [findDependency(name, dependencies, lock, project)];
  const installer = new PackageInstaller({ project, home: options.home, lock, consent: options.consent, report: options.report });
  const changes: Array<{ source: string; from?: string; to?: string; changed: boolean }> = [];
  try {
    for (const dependency of chosen) {
      const key = keyOf(dependency, project);
      if (key === undefined) throw new ConfigError("package_source_invalid", `\`${dependency.path}\` is a folder: there is nothing to update`);
      const before = lock.packages[key];
      const after = await installer.install(dependency.path, { pinned: false });
      // Changed is what its files are, not its version: a branch or tag moves, an archive is replaced at its URL.
      const changed = before?.integrity !== after.entry.integrity;
      const [from, to] = before !== undefined && changed && describe(before) === describe(after.entry) ? [identity(before), identity(after.entry)] : [before && describe(before), describe(after.entry)];
      changes.push({ source: key, ...(from !== undefined ? { from } : {}), to, changed });
    }
    carryOver(lock, installer.lock, remote.filter((dependency) => !chosen.includes(dependency)).map((dependency) => keyOf(dependency, project)!));
    await checkNames(dependencies.map((dependency) => ({ source: dependency.path, ...(dependency.alias !== undefined ? { alias: dependency.alias } : {}) })), installer.lock, project);
  } finally {
    installer.close();
  }
  writeLock(project.lock, installer.lock);
  return changes;
}

/** A dependency by alias, package name or source; a ConfigError listing them when none matches. */
export function findDependency(name: string, dependencies: DependencySpec[], lock: Lock, project: Project): DependencySpec {
  const exact = dependencies.find((dependency) => dependency.alias === name || dependency.path === name || keyOf(dependency, project) === name);
  if (exact !== undefined) return exact;
  // By the package's own name, an aliased one's too (`lllm add … --as foo`, then `lllm remove search`), when one has it.
  const named = dependencies.filter((dependency) => {
    const key = keyOf(dependency, project);
    return key !== undefined && lock.packages[key]?.name === name;
  });
  // One known by that name in refs (no alias) is the one meant; else the only one of that name.
  const unaliased = named.filter((dependency) => dependency.alias === undefined);
  if (unaliased.length === 1) return unaliased[0]!;
  if (named.length === 1) return named[0]!;
  if (named.length > 1) throw new ConfigError("package_not_found", `two packages of the project are named \`${name}\`: ${named.map((dependency) => (dependency.alias !== undefined ? `\`${dependency.alias}\`` : dependency.path)).join(", ")}`, { hint: "Name the one you mean by its alias or its source." });
  const names = dependencies.map((dependency) => dependency.alias ?? lock.packages[keyOf(dependency, project) ?? ""]?.name ?? dependency.path);
  throw new ConfigError("package_not_found", `the project has no package \`${name}\``, { hint: names.length > 0 ? `Its packages: ${names.join(", ")}.` : "It has no packages yet: `lllm add SOURCE` adds one." });
}

/** Copy the entries of `keys` (and of their dependencies) from the old lock into the new one. */
function carryOver(from: Lock, to: Lock, keys: string[]): void {
  for (const key of reachableKeys(from, keys)) if (to.packages[key] === undefined && from.packages[key] !== undefined) to.packages[key] = from.packages[key]!;
}

function reachableKeys(lock: Lock, roots: string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (key: string): void => {
    if (seen.has(key)) return;
    seen.add(key);
    for (const dependency of lock.packages[key]?.dependencies ?? []) visit(dependency);
  };
  roots.forEach(visit);
  return seen;
}

/**
 * The project's packages loaded as a run loads them (no tool code run): a package the one added depends on may have
 * the name of another of the project's (`checkNames` sees the project's own list only). Only such a clash is the
 * added package's doing; other problems of the project are left for the run to tell.
 */
async function checkTreeNames(dir: string, home: string, name: string, source: string): Promise<void> {
  const { Registry } = await import("../registry/index.js");
  try {
    await Registry.load({ cwd: dir, home, importTools: false });
  } catch (error) {
    const clashes = error instanceof ConfigError ? error.problems.filter((problem) => /^(two packages are named|alias) `/.test(problem.message)) : [];
    if (clashes.length === 0) return;
    throw ConfigError.fromProblems(
      "package_alias_taken",
      clashes.map((problem) => {
        const clashed = /^(?:two packages are named|alias) `([^`]+)`/.exec(problem.message)?.[1];
        // The added package's own name: an alias for it fixes it. Another's (a package it depends on has the name of
        // one of the project's): the project's one needs the alias, since a dependency's name is its author's.
        const hint =
          clashed === name
            ? `Give the package you add another name: lllm add ${source} --as ${name}2.`
            : `A package ${source} depends on is named \`${clashed}\`, as one of the project's is: give the project's one an alias (lllm remove ${clashed}, then lllm add its source --as ${clashed}2), then add ${source} again.`;
        return { ...problem, hint };
      }),
    );
  }
}

/**
 * Two of the project's packages known by one name would make every ref to that name ambiguous: refused. The project
 * is a package too (where it loads as one: `lllm tools` in its folder), so the package being added (`added`) may
 * not have its name either (the others were there before: a project like that is not refused now). Returns the names.
 */
async function checkNames(dependencies: ManifestDependency[], lock: Lock, project: Project, options: { added?: string } = {}): Promise<Set<string>> {
  const byName = new Map<string, string>();
  const own = options.added !== undefined && project.manifest !== undefined ? (await readManifest(project.dir)).name : undefined;
  for (const dependency of dependencies) {
    if (!isRemoteSource(dependency.source)) continue;
    const key = sourceKey(parsePackageSource(dependency.source, { from: project.dir })!, project.dir);
    const name = dependency.alias ?? lock.packages[key]?.name;
    if (name === undefined) continue;
    const other = dependency.source === options.added && name === own ? `this project (${path.basename(project.manifest!)})` : byName.get(name);
    if (other !== undefined) {
      throw new ConfigError("package_alias_taken", `two packages of the project would be named \`${name}\`: ${other} and ${dependency.source}`, { hint: `Give one another name: lllm add ${dependency.source} --as ${name}2 (refs then use \`${name}2.tools:…\`).` });
    }
    byName.set(name, dependency.source);
  }
  return new Set(byName.keys());
}

/** A version and what tells two of its contents apart: `1.0.0 (24cae22d1f3a)`, `1.0.0 (sha512-Ab…)`. */
function identity(entry: LockEntry): string {
  return `${describe(entry)} (${entry.commit?.slice(0, 12) ?? entry.digest?.slice(7, 19) ?? entry.integrity.slice(0, 19)})`;
}

function describe(entry: LockEntry): string {
  return entry.version ?? entry.commit?.slice(0, 12) ?? entry.digest?.slice(0, 19) ?? entry.integrity.slice(0, 19);
}

function sorted(lock: Lock): unknown {
  return Object.fromEntries(Object.keys(lock.packages).sort().map((key) => [key, lock.packages[key]]));
}
