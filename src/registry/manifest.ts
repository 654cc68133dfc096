import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError, type ConfigProblem, type SourceLocation } from "../errors.js";
import { didYouMean } from "../util/closest.js";
import { manifestLocator, type ManifestLocator } from "./manifestLocator.js";
import { isPlainObject } from "../util/isPlainObject.js";
import { isProjectSettings } from "../config/isPackageManifest.js";
import { errorFirstLine } from "../util/firstLine.js";

/** A dependency of a package: a folder path (relative to the package) and the name it is known by. */
export interface DependencySpec {
  path: string;
  alias?: string;
  /** Where the dependency was declared, for messages. */
  location: SourceLocation;
}

/** What a package says about itself. All fields but `dir` come from the manifest, which may be absent. */
export interface PackageManifest {
  name: string;
  version?: string;
  description?: string;
  dependencies: DependencySpec[];
  /** The manifest file, when there is one. */
  file?: string;
  dir: string;
}

/** Manifest file names, in the order they are looked for. */
export const MANIFEST_FILES = ["lllm.toml", "lllm.yaml", "lllm.yml", "package.json"] as const;

const PACKAGE_KEYS = ["name", "version", "description"];
const TOP_KEYS = ["package", "dependencies", ...PACKAGE_KEYS];
const NAME = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;

/**
 * Read a package folder's manifest: `lllm.toml` (LLLM's format), `lllm.yaml`, or the `lllm` key of
 * `package.json`. Both the sectioned form (`[package] name=…`, `[dependencies] packages=[…]`) and a flat form
 * (`name: …`, `dependencies: […]`) are accepted. Without a manifest the name is the folder's name.
 */
export async function readManifest(dir: string, options: { defaultName?: string } = {}): Promise<PackageManifest> {
  for (const fileName of MANIFEST_FILES) {
    const file = path.join(dir, fileName);
    if (!existsSync(file)) continue;
    const text = readFileSync(file, "utf8").replace(/^\uFEFF/, ""); // an editor's byte-order mark is not JSON
    let data: unknown;
    try {
      data = await parseManifestText(fileName, text);
    } catch (error) {
      const { line, column } = errorPosition(error);
      throw new ConfigError("manifest_parse", `cannot parse the package manifest: ${errorFirstLine(error)}`, {
        location: { file, ...(line ? { line } : {}), ...(column ? { column } : {}) },
        hint: fileName.endsWith(".toml")
          ? "The manifest is TOML: `[package]` with name, version, description; `[dependencies]` with packages = [\"./dep as alias\"]."
          : "Fix the syntax of the manifest file.",
      });
    }
    if (fileName === "package.json") {
      const lllm = isPlainObject(data) ? data.lllm : undefined;
      // An ordinary package.json, or one whose `lllm` holds project settings: keep looking, then fall back to defaults.
      if (lllm === undefined || isProjectSettings(lllm)) continue;
      // npm's name stands in only when it is a valid package name (not `@scope/name`); else the folder's name.
      const npmName = isPlainObject(data) && typeof data.name === "string" && NAME.test(data.name) ? data.name : undefined;
      return interpretManifest(lllm, { dir, file, fallbackName: npmName ?? options.defaultName, locate: manifestLocator({ file, text, toml: false, prefix: ["lllm"] }) });
    }
    return interpretManifest(data ?? {}, { dir, file, ...(options.defaultName !== undefined ? { fallbackName: options.defaultName } : {}), locate: manifestLocator({ file, text, toml: fileName.endsWith(".toml") }) });
  }
  return { name: options.defaultName ?? defaultName(dir), dependencies: [], dir };
}

async function parseManifestText(fileName: string, text: string): Promise<unknown> {
  if (fileName.endsWith(".toml")) {
    const { parse } = await import("smol-toml");
    return parse(text);
  }
  if (fileName.endsWith(".json")) return JSON.parse(text);
  const { parseConfigData } = await import("../config/parseConfigData.js");
  return parseConfigData(text, fileName);
}

function interpretManifest(data: unknown, context: { dir: string; file: string; fallbackName?: string | undefined; locate: ManifestLocator }): PackageManifest {
  const { dir, file, locate } = context;
  const location: SourceLocation = { file };
  const problems: ConfigProblem[] = [];
  if (!isPlainObject(data)) {
    throw new ConfigError("manifest_invalid", "the package manifest must be a table/mapping", { location });
  }
  for (const key of Object.keys(data)) {
    if (!TOP_KEYS.includes(key)) {
      const hint = didYouMean(key, TOP_KEYS);
      problems.push({ message: `unknown key \`${key}\` in the package manifest`, location: locate([key]), hint: hint || `valid keys: ${TOP_KEYS.join(", ")}` });
    }
  }
  const section = data.package === undefined ? data : data.package;
  if (!isPlainObject(section)) {
    problems.push({ message: "`package` must be a table with name, version and description", location: locate(["package"]) });
  }
  const info = isPlainObject(section) ? section : {};
  if (data.package !== undefined) {
    for (const key of Object.keys(info)) {
      if (!PACKAGE_KEYS.includes(key)) problems.push({ message: `unknown key \`package.${key}\``, location: locate(["package", key]), hint: didYouMean(key, PACKAGE_KEYS) || `valid keys: ${PACKAGE_KEYS.join(", ")}` });
    }
  }
  const sectionPath = data.package === undefined ? [] : ["package"];
  for (const key of PACKAGE_KEYS) {
    if (info[key] !== undefined && typeof info[key] !== "string") problems.push({ message: `\`${key}\` must be a string`, location: locate([...sectionPath, key]) });
  }
  const name = typeof info.name === "string" ? info.name : context.fallbackName ?? defaultName(dir);
  if (!NAME.test(name)) {
    problems.push({ message: `package name \`${name}\` is not valid`, location: typeof info.name === "string" ? locate([...sectionPath, "name"]) : location, hint: "Use letters, digits, `_` and `-` (no dots: they separate the package from the section in refs)." });
  }
  const dependencies = readDependencies(data.dependencies, locate, problems);
  if (problems.length > 0) throw ConfigError.fromProblems("manifest_invalid", problems);
  return {
    name,
    ...(typeof info.version === "string" ? { version: info.version } : {}),
    ...(typeof info.description === "string" ? { description: info.description } : {}),
    dependencies,
    file,
    dir,
  };
}

function readDependencies(value: unknown, locate: ManifestLocator, problems: ConfigProblem[]): DependencySpec[] {
  if (value === undefined) return [];
  const listPath = isPlainObject(value) ? ["dependencies", "packages"] : ["dependencies"];
  const location = locate(listPath);
  // `[dependencies] packages = [...]` (LLLM) or a plain list.
  if (isPlainObject(value)) {
    // A misspelt key here would silently drop every dependency.
    for (const key of Object.keys(value)) {
      if (key !== "packages") problems.push({ message: `unknown key \`dependencies.${key}\``, location: locate(["dependencies", key]), hint: didYouMean(key, ["packages"]) || "valid keys: packages" });
    }
  }
  const list = isPlainObject(value) ? value.packages : value;
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    problems.push({ message: "`dependencies.packages` must be a list", location, hint: 'e.g. packages = ["./dep as alias", { path = "../other", alias = "o" }]' });
    return [];
  }
  const result: DependencySpec[] = [];
  for (const [index, entry] of list.entries()) {
    if (typeof entry === "string") {
      const match = /^(?<path>.+?)\s+as\s+(?<alias>\S+)$/.exec(entry.trim());
      result.push(match?.groups ? { path: match.groups.path!, alias: match.groups.alias!, location } : { path: entry.trim(), location });
    } else if (isPlainObject(entry) && typeof entry.path === "string" && (entry.alias === undefined || typeof entry.alias === "string")) {
      result.push({ path: entry.path, ...(typeof entry.alias === "string" ? { alias: entry.alias } : {}), location });
    } else {
      problems.push({ message: `dependency #${index + 1} must be "path", "path as alias", or {path, alias}`, location });
    }
  }
  return result;
}

function defaultName(dir: string): string {
  return path.basename(path.resolve(dir));
}



function errorPosition(error: unknown): { line?: number; column?: number } {
  if (typeof error !== "object" || error === null) return {};
  // parseConfigData (YAML within the config limits): a ConfigError that knows the place.
  if (error instanceof ConfigError && error.location?.line !== undefined) return { line: error.location.line, ...(error.location.column !== undefined ? { column: error.location.column } : {}) };
  const record = error as Record<string, unknown>;
  // smol-toml: line/column; yaml: linePos[0]; JSON: "at position N" is not worth decoding.
  if (typeof record.line === "number") return { line: record.line, ...(typeof record.column === "number" ? { column: record.column } : {}) };
  const linePos = record.linePos;
  if (Array.isArray(linePos) && isPlainObject(linePos[0]) && typeof linePos[0].line === "number") {
    return { line: linePos[0].line, ...(typeof linePos[0].col === "number" ? { column: linePos[0].col } : {}) };
  }
  return {};
}
