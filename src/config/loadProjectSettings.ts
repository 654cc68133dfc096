import { existsSync, realpathSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigError } from "../errors.js";
import { displayPath } from "./displayPath.js";
import { distrustFile, distrustFolder, trustHint } from "./distrust.js";
import { isPlainObject } from "./deepMerge.js";
import { fileLocator } from "./fileLocator.js";
import { replySizeBytes } from "./replySizeBytes.js";
import { isPackageManifest } from "./isPackageManifest.js";
import { SourceDocument } from "./SourceDocument.js";
import type { DataPath, SourceLocator } from "./SourceDocument.js";
import { validateAgainstSchema } from "./validateAgainstSchema.js";
import { warnOnce } from "./warnOnce.js";
import { isRemoteSource, resolvePackageEntry } from "./packageSource.js";

/** Project-wide defaults, from the nearest settings file above the working directory. */
export interface ProjectSettings {
  /** The model of agents whose tactic names none. */
  model?: string;
  /** Package folders loaded for every tactic, absolute (resolved against the settings file). */
  packages?: string[];
  /** The lllm home folder (caches, run logs), absolute. */
  home?: string;
  /** `false`: runs are not recorded in the run store (`$LLLM_HOME/logs.db`). */
  log?: boolean;
  /** The largest model reply read: a size such as `64M`, or megabytes (`replySizeBytes` reads it). */
  reply_size?: string | number;
  /** Model prices in dollars per million tokens, over the shipped table (`input`, `output`, optional `cached_input`, `cache_write`, `batch_input`, `batch_output`). */
  prices?: Record<string, { input: number; output: number; cached_input?: number; cache_write?: number; batch_input?: number; batch_output?: number }>;
}

export interface LoadedProjectSettings {
  settings: ProjectSettings;
  /** The settings file, absolute; undefined when none was found. */
  file?: string;
  /** The settings file is code (`.js`, `.mjs`) and was not run (`runCode: false`): its settings are unknown. */
  notRun?: true;
}

export interface LoadProjectSettingsOptions {
  /**
   * `false`: a settings file that is code (`lllm.config.js`, `.mjs`) is not imported, and its settings are left
   * out (`notRun`): for commands that must run nothing from the folder they are started in (shell completion,
   * `lllm logs`, `lllm doctor`). Default true.
   */
  runCode?: boolean;
}

const SEARCH_PLACES = [
  "package.json",
  ".lllmrc",
  ".lllmrc.json",
  ".lllmrc.yaml",
  ".lllmrc.yml",
  "lllm.config.json",
  "lllm.config.yaml",
  "lllm.config.js",
  "lllm.config.mjs",
];


export interface LoadProjectSettingsOptions {
  /** Told what is ignored (another user's settings file, a `home:` others may write to); default: stderr, once per process. */
  warn?: (message: string) => void;
  /** Where `LLLM_TRUSTED_PATHS` (and, under sudo, `SUDO_UID`) are read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The project settings that apply in `cwd`: the first of `package.json#lllm`, `.lllmrc` (YAML or JSON),
 * `.lllmrc.json`, `.lllmrc.yaml`, `.lllmrc.yml`, `lllm.config.json`, `lllm.config.yaml`, `lllm.config.js`,
 * `lllm.config.mjs`, looking in `cwd` and then each parent folder, up to the repository's root (a folder with
 * `.git`), the user's home folder, or the filesystem root, whichever comes first. A settings file of another user
 * (see `distrustFile`) is ignored with a warning, and so is a `home:` others may write to (`distrustFolder`).
 * Relative `packages` and `home` are resolved against the settings file. Throws a `ConfigError` for a file that
 * does not parse or holds unknown keys. No settings file is not an error: `{ settings: {} }`.
 */
export async function loadProjectSettings(cwd: string = process.cwd(), options: LoadProjectSettingsOptions = {}): Promise<LoadedProjectSettings> {
  const env = options.env ?? process.env;
  const warn = options.warn ?? warnOnce;
  const found = await findSettingsFile(path.resolve(cwd), { env, warn, runCode: options.runCode !== false });
  if (found !== undefined && "notRun" in found) return { settings: {}, file: found.file, notRun: true };
  if (!found || isEmptySettings(found.config)) return { settings: {} };
  const { file, config, locator } = found;
  const isPackageJson = path.basename(file) === "package.json";
  const problems = validateAgainstSchema(config, "settings", locator, isPackageJson ? { rootName: "package.json#lllm" } : {});
  if (problems.length > 0) throw ConfigError.fromProblems("config_invalid", problems);
  const settings = resolvePaths(config as ProjectSettings, path.dirname(file));
  replySizeBytes(settings.reply_size, file); // a size the schema lets through but that means nothing fails here, at load
  const homeDistrust = settings.home === undefined ? undefined : distrustFolder(settings.home, env);
  if (homeDistrust !== undefined) {
    warn(`ignored \`home: ${settings.home}\` of ${file}: ${homeDistrust}; lllm keeps no runs, keys or packages there (${trustHint(settings.home!)})`);
    delete settings.home;
  }
  return { settings, file };
}

/** The nearest settings file of the walk up from `start`, skipping (with a warning) those lllm does not trust. */
async function findSettingsFile(
  start: string,
  options: { env: NodeJS.ProcessEnv; warn: (message: string) => void; runCode: boolean },
): Promise<SettingsFile | { file: string; notRun: true } | undefined> {
  const home = homeFolder();
  for (let folder = start; ; folder = path.dirname(folder)) {
    for (const name of SEARCH_PLACES) {
      const file = path.join(folder, name);
      // Code is not even looked at (trusted or not) when the caller must run nothing of the folder.
      if (!options.runCode && /\.m?js$/.test(name) && statSync(file, { throwIfNoEntry: false })?.isFile()) return { file, notRun: true };
      const read = await readSettingsFile(file, options.env);
      if (read === undefined) continue;
      if ("distrust" in read) {
        options.warn(`ignored the settings file ${read.file}: ${read.distrust}; lllm reads settings of yours (or root's) alone (${trustHint(read.file)})`);
        continue;
      }
      return read;
    }
    // The repository's root and the home folder are as far as a project goes: what is above them is someone else's.
    if (path.dirname(folder) === folder || folder === home || existsSync(path.join(folder, ".git"))) return undefined;
  }
}

/** The user's home folder, resolved (the working folder is, so that the two compare). */
function homeFolder(): string {
  try {
    return realpathSync(homedir());
  } catch {
    return path.resolve(homedir());
  }
}

interface SettingsFile {
  file: string;
  config: unknown;
  locator: SourceLocator;
}

/**
 * The settings in `file`, or undefined when it does not exist or holds none (a package.json without an `lllm`
 * key, or whose `lllm` key is the package's own manifest): the search then goes on. A file lllm does not trust is
 * `{file, distrust}`, before any of its code is run.
 */
async function readSettingsFile(file: string, env: NodeJS.ProcessEnv): Promise<SettingsFile | { file: string; distrust: string } | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return undefined; // missing, a folder, unreadable: not a settings file
  }
  const name = path.basename(file);
  const distrust = distrustFile(file, env);
  if (name === "package.json") {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      return undefined; // a broken package.json is npm's to report, not ours
    }
    const settings = isPlainObject(data) ? data.lllm : undefined;
    if (settings === undefined || isPackageManifest(settings)) return undefined;
    if (distrust !== undefined) return { file, distrust };
    return { file, config: settings, locator: prefixed(SourceDocument.parse(text, displayPath(file)), ["lllm"]) };
  }
  if (distrust !== undefined) return { file, distrust };
  if (name.endsWith(".js") || name.endsWith(".mjs")) {
    const loaded = (await import(pathToFileURL(file).href)) as { default?: unknown };
    return { file, config: loaded.default ?? loaded, locator: fileLocator(displayPath(file)) };
  }
  // .lllmrc (YAML or JSON), .json, .yaml, .yml: YAML reads JSON too.
  if (text.trim() === "") return { file, config: undefined, locator: fileLocator(displayPath(file)) };
  const document = SourceDocument.parse(text, displayPath(file), { allowEmpty: true });
  return { file, config: document.data, locator: document };
}

/** An empty settings file (or a module exporting nothing) stops the search with no settings. */
function isEmptySettings(config: unknown): boolean {
  return config === undefined || config === null;
}

function resolvePaths(settings: ProjectSettings, folder: string): ProjectSettings {
  const resolve = (value: string): string => path.resolve(folder, value === "~" || value.startsWith("~/") ? path.join(homedir(), value.slice(1)) : value);
  return {
    ...(settings.model !== undefined ? { model: settings.model } : {}),
    ...(settings.packages !== undefined ? { packages: settings.packages.map((entry) => (isRemoteSource(entry) ? resolvePackageEntry(entry, folder) : resolve(entry))) } : {}),
    ...(settings.home !== undefined ? { home: resolve(settings.home) } : {}),
    ...(settings.log !== undefined ? { log: settings.log } : {}),
    ...(settings.reply_size !== undefined ? { reply_size: settings.reply_size } : {}),
    ...(settings.prices !== undefined ? { prices: settings.prices } : {}),
  };
}


/** A locator for data that sits under `prefix` in `document` (the `lllm` key of package.json). */
function prefixed(document: SourceDocument, prefix: DataPath): SourceLocator {
  return {
    file: document.file,
    locate: (at) => document.locate([...prefix, ...at]),
    locateKey: (at) => document.locateKey([...prefix, ...at]),
  };
}
