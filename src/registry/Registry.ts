import { existsSync, realpathSync, statSync, readdirSync } from "node:fs";
import path from "node:path";
import { collectProblems, collectProblemsAsync, ConfigError, formatLocation, type ConfigProblem, type SourceLocation } from "../errors.js";
import { toFunctionTool, type FunctionTool } from "../tools/index.js";
import { closest } from "../util/closest.js";
import { lllmHome } from "../config/lllmHome.js";
import { distrustFolder, trustHint } from "../config/distrust.js";
import { escapesFolder } from "../config/packageConfinement.js";
import { warnOnce } from "../config/warnOnce.js";
import { readManifest } from "./manifest.js";
import { isRemoteSource } from "../config/packageSource.js";
import { findProject } from "./installed/findProject.js";
import { installedPackage } from "./installed/installedPackage.js";
import { Package, type FileEntry, type ToolEntry } from "./Package.js";
import { parseRef, type Ref, type Section } from "./ref.js";
import { firstLine } from "../util/firstLine.js";
import { realOrResolved } from "../util/realPath.js";

/**
 * A package to load, and where it was named (for messages): a folder, or a remote source (`npm:…`, `git+…`,
 * `oci://…`, a tarball) that the project's lllm.lock resolves to its folder in the cache (never fetched here).
 */
export interface PackageSource {
  dir: string;
  location?: SourceLocation;
  /** The folder a relative tarball path is resolved against; default: the working directory. */
  from?: string;
}

export interface RegistryOptions {
  /** Package folders named explicitly: the tactic's `packages:`, `--package` flags, project settings. */
  packages?: Array<string | PackageSource>;
  /** The folder whose `lllm_packages/*` are discovered. Default: the current directory. */
  cwd?: string;
  /** `$LLLM_HOME`, whose `packages/*` are discovered. Default: `$LLLM_HOME` or `~/.lllm`. */
  home?: string;
  /** Look in `./lllm_packages` and `$LLLM_HOME/packages`. Default true. */
  discover?: boolean;
  /**
   * `false`: index the packages without importing their tool files, so that no package code runs (a listing of
   * tactics for shell completion); the packages then offer no tools. Default true.
   */
  importTools?: boolean;
}

/** One package to load, and the state of the load it is part of. */
interface LoadOneOptions {
  source: PackageSource;
  /** The name a dependent gave it (`"./dep as other"`). */
  alias?: string;
  /** The real folders of the dependents on the way here, to report a dependency cycle. */
  chain: string[];
  /** Packages loaded so far, by real folder. */
  byDir: Map<string, Package>;
  /** Every problem found, reported together at the end. */
  problems: ConfigProblem[];
  /** Listed by the user or as a dependency (a discovered package is shadowed by an explicit one of its name). */
  explicit: boolean;
  /** Whether tool files are imported (`RegistryOptions.importTools`). */
  importTools: boolean;
}

/** How `lookup` finds an entry of one section. */
interface Lookup<E> {
  /** The entry named `key` in a package, if it has one. */
  get(pkg: Package, key: string): E | undefined;
  /** A registration made at run time that a bare name finds after its own package's (tools only). */
  runtime?(key: string): E | undefined;
  /** Several packages have the name: the one that wins anyway, if any. */
  choose?(found: E[]): E | undefined;
}

/** Where a ref is used: the package it is resolved from (bare names look there first) and the file:line. */
export interface ResolveOptions {
  from?: string;
  where?: SourceLocation;
}

/** A resolved tool: the entry it came from and the tool bound to its implementation. */
export interface ResolvedTool {
  ref: string;
  tool: FunctionTool;
  entry?: ToolEntry;
}

/**
 * The packages of a run, and the runtime's own registered tools, indexed for ref resolution. Bare names resolve
 * in the referring package first, then among runtime registrations, then in every package; declarations bind to
 * an implementation of the same exact name.
 */
export class Registry {
  /** Packages by every name they are known by (their own name and any alias). */
  readonly packages = new Map<string, Package>();
  private readonly runtimeTools = new Map<string, FunctionTool>();
  /** Packages by real folder path, so a folder reached twice (listed, and as a dependency) loads once. */
  private readonly byDir = new Map<string, Package>();
  /** The real folders of packages installed from a remote source (`lllm add`): cached copies, not to be edited. */
  private readonly installedDirs = new Set<string>();
  private discovered = false;
  /** Where remote sources are resolved: the project's lock (from `cwd`) and the cache (in `home`). */
  private where: { cwd: string; home?: string } = { cwd: process.cwd() };

  /** Load packages and their dependencies. All problems found are thrown together as one ConfigError. */
  static async load(options: RegistryOptions = {}): Promise<Registry> {
    const registry = new Registry();
    await registry.add(options);
    return registry;
  }

  /**
   * Register an implementation under a name, like the seed's `runtime.register_tool(name, impl)`. Declarations
   * with that exact name bind to it; a bare name in `tools:` finds it too.
   */
  registerTool(name: string, implementation: FunctionTool | unknown): void {
    const tool = toFunctionTool(implementation);
    if (!tool) throw new ConfigError("tool_invalid", `registerTool(\`${name}\`): not a tool; pass the result of tool({...}) or {name, description, parameters, run}`);
    this.runtimeTools.set(name, tool);
  }

  /** The distinct packages, in load order. */
  list(): Package[] {
    return [...new Set(this.packages.values())];
  }

  /** Every tool of every package, plus runtime registrations. */
  listTools(): ToolEntry[] {
    return this.list().flatMap((pkg) => pkg.tools());
  }

  /**
   * The tool files of the loaded packages that could not be used, one problem each (file and the first line of
   * the error). Loading does not fail on them, so that one broken file does not disable a package's other tools;
   * callers report them (the CLI warns, `validate` fails).
   */
  brokenFiles(): ConfigProblem[] {
    return this.list().flatMap((pkg) => pkg.brokenFiles);
  }

  /** Throw the broken tool files as one ConfigError (for `validate`, and callers that want every file sound). */
  assertNoBrokenFiles(): void {
    const broken = this.brokenFiles();
    if (broken.length > 0) throw ConfigError.fromProblems("package_invalid", broken);
  }

  get runtime(): ReadonlyMap<string, FunctionTool> {
    return this.runtimeTools;
  }

  /** Resolve a tool ref or bare name and bind declarations; throws a ConfigError that says what exists. */
  resolveTool(text: string, options: ResolveOptions = {}): ResolvedTool {
    const hit = this.lookup<{ ref: string; entry?: ToolEntry; tool?: FunctionTool }>("tools", text, options, {
      get: (pkg, key) => {
        const entry = pkg.tool(key);
        return entry ? { ref: entry.ref, entry } : undefined;
      },
      runtime: (key) => {
        const tool = this.runtimeTools.get(key);
        return tool ? { ref: key, tool } : undefined;
      },
      // A declaration and the implementations it binds to are one tool, not rivals: the declaration owns the interface.
      choose: (found) => {
        const declarations = found.filter((item) => item.entry?.kind === "declaration");
        return declarations.length === 1 ? declarations[0] : undefined;
      },
    });
    return hit.entry ? { ref: hit.ref, tool: this.bind(hit.entry, options), entry: hit.entry } : { ref: hit.ref, tool: hit.tool! };
  }

  /** Resolve a ref to a prompt, tactic or proxy file. */
  resolveEntry(section: Exclude<Section, "tools">, text: string, options: ResolveOptions = {}): FileEntry {
    return this.lookup(section, text, options, { get: (pkg, key) => pkg.entries(section).get(key) });
  }

  /**
   * The one resolution of a ref: `pkg.section:key` in that package; a bare name in the package it is used from,
   * then (tools) a runtime registration, then in every loaded package, where more than one match is ambiguous
   * unless `how.choose` picks one. Throws a ConfigError that says what exists.
   */
  private lookup<E extends { ref: string }>(section: Section, text: string, options: ResolveOptions, how: Lookup<E>): E {
    const ref = this.parse(text, section, options);
    if (ref.package !== undefined) {
      const pkg = this.packageOf(ref, options);
      const entry = how.get(pkg, ref.key);
      if (!entry) throw this.missing(ref, section, options, pkg);
      return entry;
    }
    const from = options.from !== undefined ? this.packages.get(options.from) : undefined;
    const local = from ? how.get(from, ref.key) : undefined;
    if (local) return local;
    const registered = how.runtime?.(ref.key);
    if (registered) return registered;
    const found = this.list().flatMap((pkg) => {
      const entry = how.get(pkg, ref.key);
      return entry ? [entry] : [];
    });
    const chosen = found.length === 1 ? found[0] : found.length > 1 ? how.choose?.(found) : undefined;
    if (chosen) return chosen;
    if (found.length > 1) {
      throw new ConfigError("ref_ambiguous", `${singular(section)} name \`${ref.key}\` is ambiguous: ${found.map((entry) => `\`${entry.ref}\``).join(", ")}`, {
        ...(options.where ? { location: options.where } : {}),
        hint: "Write the full ref, e.g. `" + found[0]!.ref + "`.",
      });
    }
    throw this.missing(ref, section, options);
  }

  /**
   * Whether a package was installed from a remote source (npm, git, a tarball, OCI) into the cache: its files are
   * the copy that was trusted, which runs refuse once changed, so a setting of it is changed by a file of your own.
   */
  isInstalled(pkg: Package): boolean {
    return this.installedDirs.has(pkg.dir);
  }

  /** The package a file belongs to, if any (a tactic inside `pkg/tactics/` resolves bare names in `pkg` first). */
  packageOfFile(file: string): Package | undefined {
    // Package folders are kept by real path, so compare real paths; the innermost folder wins when packages nest.
    const resolved = realOrResolved(file);
    const containing = this.list().filter((pkg) => resolved.startsWith(path.resolve(pkg.dir) + path.sep));
    return containing.sort((a, b) => b.dir.length - a.dir.length)[0];
  }

  private parse(text: string, section: Section, options: ResolveOptions): Ref {
    const ref = typeof text === "string" ? parseRef(text) : undefined;
    if (!ref) {
      throw new ConfigError("ref_invalid", `\`${String(text)}\` is not a valid ${singular(section)} ref`, {
        ...(options.where ? { location: options.where } : {}),
        hint: `Write \`package.${section}:name\` or a bare name, e.g. \`weather.${section}:${section === "tools" ? "get_weather" : "system"}\`.`,
      });
    }
    if (ref.section !== undefined && ref.section !== section) {
      throw new ConfigError("ref_section", `\`${text}\` names the ${ref.section} section where a ${singular(section)} is expected`, {
        ...(options.where ? { location: options.where } : {}),
        hint: `Use a \`package.${section}:name\` ref here.`,
      });
    }
    return ref;
  }

  private packageOf(ref: Ref, options: ResolveOptions): Package {
    // Names mean what they mean to the package the ref is written in: its own manifest name is itself (it may be
    // known to others by an alias, another package having its name), and its dependencies go by the names it gave.
    const from = options.from !== undefined ? this.packages.get(options.from) : undefined;
    if (from && ref.package === from.manifest.name) return from;
    const pkg = from?.dependencies.get(ref.package!) ?? this.packages.get(ref.package!);
    if (pkg) return pkg;
    const names = [...this.packages.keys()];
    const near = closest(ref.package!, names);
    throw new ConfigError("package_not_found", `no package named \`${ref.package}\` for ref \`${ref.text}\``, {
      ...(options.where ? { location: options.where } : {}),
      hint:
        (near.length > 0 ? `did you mean ${near.map((name) => `\`${name}\``).join(", ")}? ` : "") +
        (names.length > 0 ? `Loaded packages: ${names.join(", ")}.` : "No packages are loaded.") +
        " Add the package folder to the tactic's `packages:` list or pass --package DIR.",
    });
  }

  private missing(ref: Ref, section: Section, options: ResolveOptions, pkg?: Package): ConfigError {
    const all = section === "tools" ? [...this.listTools().map((entry) => entry.ref), ...this.runtimeTools.keys()] : this.list().flatMap((p) => [...p.entries(section).values()].map((entry) => entry.ref));
    // Match on the whole ref and on its key alone, so `wether.tools:get_weather` and `get_wether` both find it.
    const byKey = closest(ref.key, all.map(keyOf)).flatMap((key) => all.filter((candidate) => keyOf(candidate) === key));
    // Keys decide: comparing whole refs would count the shared `pkg.section:` prefix as a resemblance.
    const near = [...new Set(byKey)].slice(0, 3);
    const where = pkg ? ` in package \`${pkg.name}\` (${pkg.dir})` : "";
    // The tool may be in a file that did not load: say so, or the user looks for a typo that is not there.
    const broken = section === "tools" ? (pkg ? pkg.brokenFiles : this.brokenFiles()) : [];
    const hint =
      near.length > 0 ? `did you mean ${near.map((candidate) => `\`${candidate}\``).join(", ")}?`
      : all.length > 0 ? `Known ${section}: ${all.slice(0, 8).join(", ")}${all.length > 8 ? ", …" : ""}.`
      : broken.length > 0 ? "" // a folder of tools there is, whose files did not load
      : `No ${section} are loaded: add a package with a ${section}/ folder.`;
    const brokenNote = broken.length > 0 ? `${broken.length === 1 ? "A tool file" : "Some tool files"} did not load and may define it: ${broken.map((problem) => `${problem.location ? formatLocation(problem.location) : "?"} (${firstLine(problem.message)})`).join("; ")}. ` : "";
    return new ConfigError(`${singular(section)}_not_found` as const, `${singular(section)} \`${ref.text}\` not found${where}`, { ...(options.where ? { location: options.where } : {}), hint: `${brokenNote}${hint}`.trimEnd() });
  }

  /** A declaration takes the run of the implementation with its exact name: own package, runtime, then anywhere. */
  private bind(entry: ToolEntry, options: ResolveOptions): FunctionTool {
    if (entry.kind !== "declaration") return entry.tool;
    const owner = this.packages.get(entry.packageName);
    const own = owner?.implementations.get(entry.name);
    if (own) return entry.tool.bind(own.tool);
    const registered = this.runtimeTools.get(entry.name);
    if (registered) return entry.tool.bind(registered);
    const elsewhere = this.list().flatMap((pkg) => {
      const implementation = pkg.implementations.get(entry.name);
      return implementation ? [implementation] : [];
    });
    if (elsewhere.length === 1) return entry.tool.bind(elsewhere[0]!.tool);
    if (elsewhere.length > 1) {
      throw new ConfigError("tool_ambiguous_implementation", `declaration \`${entry.ref}\` matches several implementations: ${elsewhere.map((item) => `\`${item.ref}\``).join(", ")}`, {
        location: options.where ?? { file: entry.file },
        hint: "Keep one implementation with that name among the loaded packages, or register one with registerTool().",
      });
    }
    return entry.tool; // unbound: the caller decides whether that is an error now or at the first call
  }

  /**
   * Load more packages into this registry (folders already loaded are skipped). Discovery of `./lllm_packages`
   * and `$LLLM_HOME/packages` happens once, on the first call that allows it.
   */
  async add(options: RegistryOptions): Promise<void> {
    const problems: ConfigProblem[] = [];
    const byDir = this.byDir;
    this.where = { cwd: options.cwd ?? this.where.cwd, ...(options.home !== undefined ? { home: options.home } : this.where.home !== undefined ? { home: this.where.home } : {}) };
    const explicit: PackageSource[] = (options.packages ?? []).map((item) => (typeof item === "string" ? { dir: item } : item));
    const importTools = options.importTools !== false;
    for (const source of explicit) await this.loadOne({ source, chain: [], byDir, problems, explicit: true, importTools });
    if (options.discover !== false && !this.discovered) {
      this.discovered = true;
      // The packages the project added (`lllm add`): its manifest's remote dependencies, from the cache.
      for (const dependency of unaliasedFirst((await collectProblemsAsync(problems, () => projectDependencies(this.where.cwd))) ?? [])) {
        await this.loadOne({ source: { dir: dependency.path, location: dependency.location, from: dependency.from }, ...(dependency.alias ? { alias: dependency.alias } : {}), chain: [], byDir, problems, explicit: true, importTools });
      }
      const roots = [path.join(options.cwd ?? process.cwd(), "lllm_packages"), path.join(options.home ?? lllmHome(), "packages")];
      for (const root of roots) {
        for (const dir of subfolders(root)) {
          // Found, not named: its code runs only if it is a folder of the user's own (as the folder a command runs in
          // is taken for a package, see packagesOrHere). One another user made in a shared working folder is left out.
          const distrust = distrustFolder(realOrResolved(dir));
          if (distrust !== undefined) {
            warnOnce(`${dir} is not loaded as a package: ${distrust} (name it with -p to load it, or ${trustHint(dir)})`);
            continue;
          }
          await this.loadOne({ source: { dir }, chain: [], byDir, problems, explicit: false, importTools });
        }
      }
    }
    // A manifest read twice (the folder's own package, and the project's dependency list) says its problem once.
    const distinct = [...new Map(problems.map((problem) => [JSON.stringify([problem.message, problem.location]), problem])).values()];
    if (distinct.length > 0) throw ConfigError.fromProblems("package_invalid", distinct);
  }

  private async loadOne({ source, alias, chain, byDir, problems, explicit, importTools }: LoadOneOptions): Promise<Package | undefined> {
    let defaultName: string | undefined;
    const remote = isRemoteSource(source.dir);
    if (remote) {
      const installed = collectProblems(problems, () =>
        installedPackage(source.dir, { cwd: this.where.cwd, home: this.where.home ?? lllmHome(), ...(source.from !== undefined ? { from: source.from } : {}), ...(source.location ? { location: source.location } : {}) }),
      );
      if (installed === undefined) return undefined;
      defaultName = installed.entry.name;
      source = { ...source, dir: installed.dir };
    }
    const absolute = path.resolve(source.dir);
    if (!existsSync(absolute) || !statSync(absolute).isDirectory()) {
      problems.push({
        message: existsSync(absolute) ? `package \`${source.dir}\` is a file, not a folder` : `package folder \`${source.dir}\` does not exist`,
        ...(source.location ? { location: source.location } : {}),
        hint: "A package is a folder with an lllm.toml, lllm.yaml or package.json#lllm manifest (or just tools/, prompts/… sub-folders).",
      });
      return undefined;
    }
    const real = realpathSync(absolute);
    if (remote) this.installedDirs.add(real);
    if (chain.includes(real)) {
      // Every folder of the chain is already in byDir; its package name is what the user wrote in manifests.
      const names = [...chain, real].map((dir) => byDir.get(dir)?.name ?? path.basename(dir));
      problems.push({ message: `dependency cycle: ${names.join(" -> ")}`, ...(source.location ? { location: source.location } : {}), hint: "Remove one of the dependencies so that packages do not depend on each other in a circle." });
      return undefined;
    }
    let pkg = byDir.get(real);
    if (!pkg) {
      const manifest = await collectProblemsAsync(problems, () => readManifest(real, defaultName !== undefined ? { defaultName } : {}));
      if (!manifest) return undefined;
      // A package is known by its manifest's name and by its alias. When another package has that name already, a
      // package listed with an alias is known by the alias alone (its refs are `alias.tools:…`): that is how two
      // packages of one name live in one project (`lllm add SOURCE --as other`).
      const taken = this.packages.get(manifest.name);
      const name = alias !== undefined && explicit && taken !== undefined && taken.dir !== real ? alias : manifest.name;
      const clash = this.packages.get(name);
      if (clash && clash.dir !== real) {
        // Explicit packages shadow discovered ones, like PATH; two explicit ones with one name are an error.
        if (!explicit) return undefined;
        problems.push(
          alias !== undefined
            ? { message: `alias \`${alias}\` is already the name of package ${clash.dir}`, ...(source.location ? { location: source.location } : {}), hint: "Pick another alias." }
            : { message: `two packages are named \`${name}\`: ${clash.dir} and ${real}`, ...(source.location ? { location: source.location } : {}), hint: "Rename one in its manifest, or give it an alias where it is listed as a dependency (`\"./dep as other\"`, or `lllm add SOURCE --as other`)." },
        );
        return undefined;
      }
      pkg = new Package(name, manifest);
      byDir.set(real, pkg);
      this.packages.set(name, pkg);
      const loaded = new Map<(typeof manifest.dependencies)[number], Package>();
      for (const dependency of unaliasedFirst(manifest.dependencies)) {
        const dependencyDir = isRemoteSource(dependency.path) ? dependency.path : path.resolve(real, dependency.path);
        // An installed package's folders stay its own (see `confinementProblem`): a dependency on a folder outside it
        // would run code that `lllm add` never showed, in every command of the project.
        if (remote && escapesFolder("package", dependencyDir, real)) {
          problems.push({ message: `package \`${manifest.name}\` is installed, and its manifest depends on ${dependency.path}, a folder outside the package: it is not loaded`, ...(dependency.location ? { location: dependency.location } : {}), hint: "An installed package runs only its own files. Ask its author to depend on that package by its source (npm:NAME@RANGE, oci://…, git+https://…)." });
          continue;
        }
        const found = await this.loadOne({ source: { dir: dependencyDir, location: dependency.location, from: real }, ...(dependency.alias ? { alias: dependency.alias } : {}), chain: [...chain, real], byDir, problems, explicit: true, importTools });
        if (found) loaded.set(dependency, found);
      }
      // By the names this package uses for them, in its manifest's order.
      for (const dependency of manifest.dependencies) {
        const found = loaded.get(dependency);
        if (found) pkg.dependencies.set(dependency.alias ?? found.name, found);
      }
      await collectProblemsAsync(problems, () => pkg!.load({ importTools }));
    }
    if (alias && alias !== pkg.name) {
      const clash = this.packages.get(alias);
      if (clash && clash !== pkg) problems.push({ message: `alias \`${alias}\` is already the name of package ${clash.dir}`, ...(source.location ? { location: source.location } : {}), hint: "Pick another alias." });
      else this.packages.set(alias, pkg);
    }
    return pkg;
  }
}

/** The remote dependencies of the project's manifest (what `lllm add` recorded), with the folder they are relative to. */
async function projectDependencies(cwd: string): Promise<Array<{ path: string; alias?: string; location: SourceLocation; from: string }>> {
  const project = findProject(cwd);
  if (project?.manifest === undefined) return [];
  const manifest = await readManifest(project.dir);
  return manifest.dependencies.filter((dependency) => isRemoteSource(dependency.path)).map((dependency) => ({ ...dependency, from: project.dir }));
}

/**
 * Dependencies without an alias first: a package with an alias can give way to another of its name (it is then
 * known by the alias), one without cannot, so the latter must find its name free.
 */
function unaliasedFirst<T extends { alias?: string }>(dependencies: T[]): T[] {
  return [...dependencies.filter((dependency) => dependency.alias === undefined), ...dependencies.filter((dependency) => dependency.alias !== undefined)];
}

function subfolders(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => (entry.isDirectory() || entry.isSymbolicLink()) && !entry.name.startsWith("."))
    .map((entry) => path.join(root, entry.name))
    .sort();
}

function keyOf(ref: string): string {
  return ref.slice(ref.indexOf(":") + 1);
}

function singular(section: Section): "tool" | "proxy" | "tactic" | "prompt" {
  return section === "proxies" ? "proxy" : (section.slice(0, -1) as "tool" | "tactic" | "prompt");
}
