import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { readManifest, type DependencySpec } from "../registry/manifest.js";
import type { Project } from "../registry/installed/findProject.js";
import { yaml } from "../util/lazyYaml.js";

/** One dependency as the manifest writes it: `source` or `source as alias`. */
export interface ManifestDependency {
  source: string;
  alias?: string;
}

/** The dependencies of the project's manifest (none without one). */
export async function projectDependencies(project: Project): Promise<DependencySpec[]> {
  if (project.manifest === undefined) return [];
  return (await readManifest(project.dir)).dependencies;
}

/**
 * Write the project's dependency list: the `[dependencies] packages` array of lllm.toml (the rest of the file kept
 * as it is), or `dependencies.packages` of lllm.yaml (comments kept). Without a manifest, an lllm.toml is made,
 * named after the folder. The file is replaced in one rename.
 */
export function writeProjectDependencies(project: Project, dependencies: ManifestDependency[], taken: ReadonlySet<string> = new Set()): string {
  const file = project.manifest ?? path.join(project.dir, "lllm.toml");
  const before = existsSync(file) ? readFileSync(file, "utf8") : `[package]\nname = ${JSON.stringify(projectName(project.dir, taken))}\n`;
  const after = file.endsWith(".toml") ? withTomlDependencies(before, dependencies) : file.endsWith(".json") ? withJsonDependencies(before, dependencies) : withYamlDependencies(before, dependencies);
  const temporary = `${file}.tmp-${process.pid}`;
  writeFileSync(temporary, after);
  renameSync(temporary, file);
  return file;
}

function entryText(dependency: ManifestDependency): string {
  return dependency.alias === undefined ? dependency.source : `${dependency.source} as ${dependency.alias}`;
}

/**
 * `package.json` with its `lllm` key's dependency list replaced; the rest kept, in the file's indentation, line ends
 * and byte-order mark. (Written whole: a number past JSON's safe integers, rare in a package.json, loses digits.)
 */
function withJsonDependencies(text: string, dependencies: ManifestDependency[]): string {
  const bom = text.startsWith("\uFEFF") ? "\uFEFF" : "";
  const data = JSON.parse(text.slice(bom.length)) as { lllm: Record<string, unknown> };
  const entries = dependencies.map(entryText);
  const current = data.lllm.dependencies;
  if (current !== null && typeof current === "object" && !Array.isArray(current)) (current as Record<string, unknown>).packages = entries;
  else data.lllm.dependencies = entries;
  const indent = /^[ \t]+(?=")/m.exec(text)?.[0] ?? "  ";
  const newline = text.includes("\r\n") ? "\r\n" : "\n";
  return `${bom}${JSON.stringify(data, null, indent).replaceAll("\n", newline)}${newline}`;
}

function withYamlDependencies(text: string, dependencies: ManifestDependency[]): string {
  const document = yaml.parseDocument(text);
  const entries = dependencies.map(entryText);
  const current = document.get("dependencies");
  if (yaml.isSeq(current) || document.get("package") === undefined && current !== undefined && !yaml.isMap(current)) document.set("dependencies", entries);
  else document.setIn(["dependencies", "packages"], entries);
  return document.toString();
}

/** The TOML with its dependency array replaced (or added), the rest of the text untouched. */
function withTomlDependencies(text: string, dependencies: ManifestDependency[]): string {
  const array = `[\n${dependencies.map((dependency) => `  ${JSON.stringify(entryText(dependency))},\n`).join("")}]`;
  const lines = text.split("\n");
  let offset = 0;
  let table = "";
  for (const line of lines) {
    const header = /^\s*\[\s*([^\]]+?)\s*\]\s*(?:#.*)?$/.exec(line);
    if (header) table = header[1]!.replace(/["\s]/g, "");
    else {
      const key = table === "dependencies" ? /^\s*packages\s*=\s*\[/.exec(line) : table === "" ? /^\s*dependencies\s*=\s*\[/.exec(line) : null;
      if (key) {
        const start = offset + key[0].length - 1;
        return text.slice(0, start) + array + text.slice(closingBracket(text, start) + 1);
      }
    }
    offset += line.length + 1;
  }
  // A [dependencies] table with no packages key: put it first in the table; no table: add one at the end.
  const header = /^\s*\[\s*dependencies\s*\]\s*(?:#.*)?$/m.exec(text);
  if (header) {
    const at = header.index + header[0].length;
    return `${text.slice(0, at)}\npackages = ${array}${text.slice(at)}`;
  }
  return `${text.replace(/\n*$/, "\n")}\n[dependencies]\npackages = ${array}\n`;
}

/** The index of the `]` that closes the array opening at `start`, skipping strings and nested brackets. */
function closingBracket(text: string, start: number): number {
  let depth = 0;
  for (let index = start; index < text.length; index += 1) {
    const char = text[index];
    if (char === '"' || char === "'") {
      const triple = text.startsWith(char.repeat(3), index);
      const close = triple ? char.repeat(3) : char;
      let at = index + close.length;
      while (at < text.length && !text.startsWith(close, at)) at += char === '"' && text[at] === "\\" ? 2 : 1;
      index = at + close.length - 1;
    } else if (char === "#") {
      const newline = text.indexOf("\n", index);
      index = newline < 0 ? text.length : newline;
    } else if (char === "[" || char === "{") depth += 1;
    else if (char === "]" || char === "}") {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return text.length - 1;
}

/**
 * The name of a project whose manifest lllm makes: its folder's, unless one of its packages is named so (a folder
 * `weather` that adds the `weather` package would clash with it wherever the project loads as a package).
 */
function projectName(dir: string, taken: ReadonlySet<string>): string {
  const base = path.basename(dir).replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+/, "");
  const name = /^[A-Za-z_]/.test(base) ? base : `project-${base || "lllm"}`;
  return taken.has(name) ? `${name}-project` : name;
}
