import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ConfigError } from "../errors.js";
import { parsePackageSource, sourceKey, type RemoteSource } from "../config/packageSource.js";
import type { Project } from "../registry/installed/findProject.js";
import type { Lock, LockEntry, LockTrust } from "../registry/installed/lockFile.js";
import { readStoreRecord, storeFolder, storeRecordFile } from "../registry/installed/packageStore.js";
import { verifyInstalled } from "../registry/installed/verifyInstalled.js";
import { consentToCode, type ConsentOptions } from "./consent.js";
import { extractArchive } from "./extractArchive.js";
import { fetchSource, type FetchContext } from "./sources/fetchSource.js";
import type { NpmSettings } from "./sources/npmConfig.js";
import { commitStaged, inspectStaged, stagingFolder } from "./stagePackage.js";

export interface InstallerOptions {
  project: Project;
  /** `$LLLM_HOME`: the cache is its `packages/.store`. */
  home: string;
  /** The lock as it was (pins what `pinned` installs ask for). */
  lock: Lock;
  consent: ConsentOptions;
  /** Progress lines (stderr). */
  report: (line: string) => void;
}

/** A source installed: its lock key and entry, and whether it was fetched now (not already cached). */
export interface Installed {
  key: string;
  entry: LockEntry;
  fetched: boolean;
}

/**
 * Fetches sources into the cache and builds the new lock. Each package is fetched, unpacked into a staging folder
 * of the cache, checked (the lock's integrity when it pins one, its code shown for consent when it carries any),
 * then renamed into place; its remote dependencies follow the same way. The lock and the manifest are written by
 * the caller once everything is in the cache: a failure leaves them as they were.
 */
export class PackageInstaller {
  /** The new lock, filled as sources are installed. */
  readonly lock: Lock = { lockfileVersion: 1, packages: {} };
  private readonly inProgress = new Set<string>();
  private npm: Promise<NpmSettings> | undefined;
  private scratch: string | undefined;

  constructor(private readonly options: InstallerOptions) {}

  /**
   * Install `text` (a source as the manifest writes it). `pinned`: take what the old lock pins for it (an
   * install); otherwise resolve it again (an add or an update), and its dependencies too.
   */
  async install(text: string, options: { pinned: boolean; from?: string }): Promise<Installed> {
    const source = parsePackageSource(text, { from: options.from ?? this.options.project.dir });
    if (source === undefined) throw new ConfigError("package_source_invalid", `\`${text}\` is a folder, not a package to fetch`, { hint: "Folders are used where they are: list them in the manifest yourself." });
    const key = sourceKey(source, this.options.project.dir);
    const done = this.lock.packages[key];
    if (done !== undefined || this.inProgress.has(key)) return { key, entry: done ?? this.options.lock.packages[key]!, fetched: false };
    this.inProgress.add(key);
    const locked = options.pinned ? this.options.lock.packages[key] : undefined;
    const entry = (locked !== undefined ? await this.fromCache(key, locked) : undefined) ?? (await this.fetch(key, source, locked, options.pinned));
    this.lock.packages[key] = entry.entry;
    return entry;
  }

  /** Remove the scratch folder (git clones). */
  close(): void {
    if (this.scratch !== undefined) rmSync(this.scratch, { recursive: true, force: true });
  }

  /** A locked package already in the cache and unchanged: nothing to fetch (its dependencies are checked too). */
  private async fromCache(key: string, locked: LockEntry): Promise<Installed | undefined> {
    const folder = storeFolder(this.options.home, locked.integrity);
    if (!existsSync(folder)) return undefined;
    const change = verifyInstalled(folder, locked.integrity);
    if (change !== undefined) {
      this.options.report(`lllm: the cached copy of ${key} was modified (${change.file} ${change.how}): fetching it again`);
      rmSync(folder, { recursive: true, force: true });
      rmSync(storeRecordFile(folder), { force: true });
      return undefined;
    }
    for (const dependency of locked.dependencies ?? []) await this.install(dependency, { pinned: true });
    return { key, entry: locked, fetched: false };
  }

  private async fetch(key: string, source: RemoteSource, locked: LockEntry | undefined, pinned: boolean): Promise<Installed> {
    const fetched = await fetchSource(source, this.fetchContext(), locked);
    const staging = stagingFolder(this.options.home);
    try {
      await extractArchive(fetched.archive, staging, { label: key, stripTopFolder: fetched.stripTopFolder });
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      throw error;
    }
    const staged = await inspectStaged(staging, { home: this.options.home, label: key, defaultName: fetched.defaultName, ...(locked !== undefined ? { expected: locked.integrity } : {}) });
    let trusted: LockTrust | undefined;
    try {
      if (source.kind === "npm" && !staged.hasManifest) {
        throw new ConfigError("package_source_invalid", `${key} is an npm package, but not an lllm package: it has no lllm.toml, lllm.yaml or "lllm" key in its package.json`, {
          hint: "Add an lllm manifest to the package (`lllm pack` and `lllm publish --to npm` make one), or check the name.",
        });
      }
      if (staged.code.length > 0) {
        // The same files trusted before in this home need no second yes; new or changed code does.
        trusted = staged.cached ? readStoreRecord(storeFolder(this.options.home, staged.integrity))?.trusted : undefined;
        trusted ??= await consentToCode(`${key} (${staged.name}${fetched.fields.version ?? staged.version ? ` ${fetched.fields.version ?? staged.version}` : ""})`, staged.code, this.options.consent);
      }
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      throw error;
    }
    commitStaged(staged, this.options.home, trusted);
    this.options.report(`lllm: ${staged.cached ? "already cached" : "fetched"} ${key} (${staged.name}${fetched.fields.version ?? staged.version ? ` ${fetched.fields.version ?? staged.version}` : ""}${fetched.fields.commit ? ` at ${fetched.fields.commit.slice(0, 12)}` : ""}${staged.code.length > 0 ? `, ${staged.code.length} code file${staged.code.length === 1 ? "" : "s"}` : ", no code"})`);
    const dependencies: string[] = [];
    for (const dependency of staged.dependencies) {
      const installed = await this.install(dependency.path, { pinned, from: staged.dir });
      dependencies.push(installed.key);
    }
    const version = fetched.fields.version ?? staged.version;
    const entry: LockEntry = {
      name: staged.name,
      ...(version !== undefined ? { version } : {}),
      ...definedFields(fetched.fields),
      integrity: staged.integrity,
      code: staged.code,
      ...(trusted !== undefined ? { trusted } : {}),
      ...(dependencies.length > 0 ? { dependencies } : {}),
    };
    return { key, entry, fetched: !staged.cached };
  }

  private fetchContext(): FetchContext {
    return {
      npmSettings: () => (this.npm ??= import("./sources/npmConfig.js").then(({ loadNpmSettings }) => loadNpmSettings(this.options.project.dir))),
      scratch: () => (this.scratch ??= mkdtempSync(path.join(tmpdir(), "lllm-fetch-"))),
    };
  }
}

function definedFields(fields: Partial<LockEntry>): Partial<LockEntry> {
  return Object.fromEntries(Object.entries(fields).filter(([name, value]) => value !== undefined && name !== "version"));
}
