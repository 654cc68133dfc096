import { homedir } from "node:os";
import path from "node:path";
import type { AnySchemaObject } from "ajv";
import { ConfigError } from "../errors.js";
import { displayPath } from "./displayPath.js";
import { isPlainObject } from "./deepMerge.js";
import { fileLocator } from "./fileLocator.js";
import { SourceDocument } from "./SourceDocument.js";
import type { DataPath, SourceLocator } from "./SourceDocument.js";
import { validateAgainstSchema } from "./validateAgainstSchema.js";

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
  /** Model prices in dollars per million tokens, over the shipped table (`input`, `output`, optional `cached_input`). */
  prices?: Record<string, { input: number; output: number; cached_input?: number }>;
}

export interface LoadedProjectSettings {
  settings: ProjectSettings;
  /** The settings file, absolute; undefined when none was found. */
  file?: string;
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

const SETTINGS_SCHEMA: AnySchemaObject = {
  type: "object",
  additionalProperties: false,
  properties: {
    model: { type: "string", minLength: 1 },
    packages: { type: "array", items: { type: "string", minLength: 1 } },
    home: { type: "string", minLength: 1 },
    log: { type: "boolean" },
    prices: {
      type: "object",
      additionalProperties: {
        type: "object",
        additionalProperties: false,
        required: ["input", "output"],
        properties: { input: { type: "number", minimum: 0 }, output: { type: "number", minimum: 0 }, cached_input: { type: "number", minimum: 0 } },
      },
    },
  },
};

// Keys of a package manifest (schemas/package.schema.json): a package's own package.json#lllm is its manifest,
// not project settings, and must not stop `lllm` from running inside the package's folder.
const MANIFEST_KEYS = ["package", "name", "version", "description", "dependencies"];

/**
 * The project settings that apply in `cwd`: the first of `package.json#lllm`, `.lllmrc` (YAML or JSON),
 * `.lllmrc.json`, `.lllmrc.yaml`, `.lllmrc.yml`, `lllm.config.json`, `lllm.config.yaml`, `lllm.config.js`,
 * `lllm.config.mjs`, looking in `cwd` and then each parent folder up to the filesystem root. Relative `packages`
 * and `home` are resolved against the settings file. Throws a `ConfigError` for a file that does not parse or
 * holds unknown keys. No settings file is not an error: `{ settings: {} }`.
 */
export async function loadProjectSettings(cwd: string = process.cwd()): Promise<LoadedProjectSettings> {
  const start = path.resolve(cwd);
  // Imported here, not at the top: most commands never need it, and CLI start-up time matters.
  const { cosmiconfig, defaultLoaders } = await import("cosmiconfig");
  const locators = new Map<string, SourceLocator>();
  // cosmiconfig's "global" strategy also looks in the user's config folder after the root; settings are per project.
  const inProject = (filepath: string): boolean => isWithin(start, path.dirname(filepath));
  const readYaml = (filepath: string, content: string): unknown => {
    if (!inProject(filepath)) return null;
    const document = SourceDocument.parse(content, displayPath(filepath), { allowEmpty: true });
    locators.set(filepath, document);
    return document.data;
  };
  // cosmiconfig reads the `lllm` key of what this returns: `{}` means "no settings here, keep looking".
  const readPackageJson = (filepath: string, content: string): unknown => {
    if (!inProject(filepath)) return {};
    let data: unknown;
    try {
      data = JSON.parse(content);
    } catch {
      return {}; // a broken package.json is npm's to report, not ours
    }
    const settings = isPlainObject(data) ? data.lllm : undefined;
    if (settings === undefined || isPackageManifest(settings)) return {};
    const document = SourceDocument.parse(content, displayPath(filepath));
    locators.set(filepath, prefixed(document, ["lllm"]));
    return { lllm: settings };
  };
  const readModule = async (filepath: string, content: string): Promise<unknown> => (inProject(filepath) ? defaultLoaders[".js"]!(filepath, content) : null);
  const explorer = cosmiconfig("lllm", {
    searchPlaces: SEARCH_PLACES,
    searchStrategy: "global",
    stopDir: path.parse(start).root,
    cache: false,
    loaders: {
      ".json": (filepath, content) => (path.basename(filepath) === "package.json" ? readPackageJson(filepath, content) : readYaml(filepath, content)),
      ".yaml": readYaml,
      ".yml": readYaml,
      noExt: readYaml,
      ".js": readModule,
      ".mjs": readModule,
      ".cjs": readModule,
      ".ts": () => null,
    },
  });
  const result = await explorer.search(start);
  if (!result || result.isEmpty) return { settings: {} };
  const file = result.filepath;
  const locator = locators.get(file) ?? fileLocator(displayPath(file));
  const isPackageJson = path.basename(file) === "package.json";
  const problems = validateAgainstSchema(result.config, SETTINGS_SCHEMA, locator, isPackageJson ? { rootName: "package.json#lllm" } : {});
  if (problems.length > 0) throw ConfigError.fromProblems("config_invalid", problems);
  return { settings: resolvePaths(result.config as ProjectSettings, path.dirname(file)), file };
}

function resolvePaths(settings: ProjectSettings, folder: string): ProjectSettings {
  const resolve = (value: string): string => path.resolve(folder, value === "~" || value.startsWith("~/") ? path.join(homedir(), value.slice(1)) : value);
  return {
    ...(settings.model !== undefined ? { model: settings.model } : {}),
    ...(settings.packages !== undefined ? { packages: settings.packages.map(resolve) } : {}),
    ...(settings.home !== undefined ? { home: resolve(settings.home) } : {}),
    ...(settings.log !== undefined ? { log: settings.log } : {}),
    ...(settings.prices !== undefined ? { prices: settings.prices } : {}),
  };
}

function isPackageManifest(value: unknown): boolean {
  return isPlainObject(value) && MANIFEST_KEYS.some((key) => key in value) && !Object.keys(SETTINGS_SCHEMA.properties as object).some((key) => key in value);
}

function isWithin(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/** A locator for data that sits under `prefix` in `document` (the `lllm` key of package.json). */
function prefixed(document: SourceDocument, prefix: DataPath): SourceLocator {
  return {
    file: document.file,
    locate: (at) => document.locate([...prefix, ...at]),
    locateKey: (at) => document.locateKey([...prefix, ...at]),
  };
}
