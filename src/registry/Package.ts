import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { displayPath } from "../config/displayPath.js";
import { parseConfigData } from "../config/parseConfigData.js";
import { ConfigError, type ConfigProblem } from "../errors.js";
import { FunctionTool, functionFromDeclaration, TOOL_BRAND, toFunctionTool } from "../tools/index.js";
import { kindOf } from "../tools/JsonSchema.js";
import { importModule } from "./importModule.js";
import type { PackageManifest } from "./manifest.js";
import { formatRef, type Section } from "./ref.js";
import { errorFirstLine } from "../util/firstLine.js";
import { CODE_FILE, isCodeFile } from "../util/codeFile.js";
import { compareNames } from "../util/compareNames.js";

/** A tool found in a package: an implementation (code or command) or a declaration awaiting one. */
export interface ToolEntry {
  ref: string;
  name: string;
  packageName: string;
  file: string;
  tool: FunctionTool;
  kind: "code" | "command" | "declaration";
}

/** A file-backed entry of the other sections (prompts, tactics, proxies), indexed by file stem. */
export interface FileEntry {
  ref: string;
  key: string;
  packageName: string;
  file: string;
}

const DATA = /\.(?:ya?ml|json)$/;
/** Tactics and proxies are YAML/JSON files or code files. */
const DATA_OR_CODE = new RegExp(`${DATA.source}|${CODE_FILE.source}`);
const PROMPT = /\.(?:md|txt|ya?ml)$/;

/**
 * A loaded package: its manifest, the name it is known by (its alias when a dependency gave one), and its
 * sections indexed by key. Tool code is imported when the package loads; other sections are indexed by file
 * name and read when used.
 */
export class Package {
  readonly implementations = new Map<string, ToolEntry>();
  readonly declarations = new Map<string, ToolEntry>();
  readonly prompts = new Map<string, FileEntry>();
  readonly tactics = new Map<string, FileEntry>();
  readonly proxies = new Map<string, FileEntry>();
  /**
   * Tool files that could not be used (an import that throws, a syntax error, an export that is not a valid tool,
   * no tool at all), one problem each. They do not stop the package from loading: its other tools work, a run
   * that needs a tool of a broken file fails at binding (the not-found error names these files), and
   * `lllm validate` fails on them.
   */
  readonly brokenFiles: ConfigProblem[] = [];
  /** Dependencies by the name this package uses for them. */
  readonly dependencies = new Map<string, Package>();

  constructor(
    readonly name: string,
    readonly manifest: PackageManifest,
  ) {}

  get dir(): string {
    return this.manifest.dir;
  }

  /** The tools this package offers: a declaration hides the implementation of the same name (it owns the interface). */
  tools(): ToolEntry[] {
    const byName = new Map<string, ToolEntry>(this.implementations);
    for (const [name, entry] of this.declarations) byName.set(name, entry);
    return [...byName.values()].sort((a, b) => compareNames(a.name, b.name));
  }

  tool(name: string): ToolEntry | undefined {
    return this.declarations.get(name) ?? this.implementations.get(name);
  }

  entries(section: Exclude<Section, "tools">): Map<string, FileEntry> {
    return section === "prompts" ? this.prompts : section === "tactics" ? this.tactics : this.proxies;
  }

  /**
   * Read the sections from disk. Every problem of the package is collected and thrown at once. `importTools:
   * false` leaves the tools out, so that none of the package's code runs.
   */
  async load(options: { importTools?: boolean } = {}): Promise<void> {
    const problems: ConfigProblem[] = [];
    if (options.importTools !== false) await this.loadTools(problems);
    this.indexFiles("prompts", PROMPT, this.prompts, problems);
    this.indexFiles("tactics", DATA_OR_CODE, this.tactics, problems);
    this.indexFiles("proxies", DATA_OR_CODE, this.proxies, problems);
    if (problems.length > 0) throw ConfigError.fromProblems("package_invalid", problems);
  }

  private async loadTools(problems: ConfigProblem[]): Promise<void> {
    for (const file of listFiles(path.join(this.dir, "tools"))) {
      if (isCodeFile(file) && !file.endsWith(".d.ts")) {
        await this.loadCodeTools(file, problems);
      } else if (DATA.test(file)) {
        this.loadDeclaredTool(file, problems);
      }
    }
  }

  private async loadCodeTools(file: string, problems: ConfigProblem[]): Promise<void> {
    let exports: Record<string, unknown>;
    try {
      exports = await importModule(file);
    } catch (error) {
      this.brokenFiles.push({
        message: `tool file failed to load: ${errorText(error)}`,
        location: { file, ...(parsePosition(error, file) ?? stackLine(error, file)) },
        hint: "Fix the error in this file (it runs when the package loads), or move helper code out of tools/ (into a sub-folder or a file starting with `_`).",
      });
      return;
    }
    const seen = new Set<unknown>();
    let found = 0;
    let invalid = 0;
    // `export = tool(…)` in a .cts (loaded through the transpiler) is the module itself, not one of its exports.
    const whole = exports instanceof FunctionTool || (exports as Record<symbol, unknown>)[TOOL_BRAND] === true ? [["default", exports] as const] : undefined;
    for (const [exportName, value] of whole ?? Object.entries(exports)) {
      for (const candidate of Array.isArray(value) ? value : [value]) {
        if (seen.has(candidate)) continue; // `export default x` and `export { x }` are one tool
        seen.add(candidate);
        let tool: FunctionTool | undefined;
        try {
          tool = toFunctionTool(candidate);
        } catch (error) {
          invalid += 1;
          const hint = error instanceof ConfigError ? error.hint : undefined;
          this.brokenFiles.push({ message: `export \`${exportName}\` is not a valid tool: ${errorText(error)}`, location: { file }, ...(hint ? { hint } : {}) });
          continue;
        }
        if (!tool) continue; // helpers and constants may be exported beside tools
        found += 1;
        tool.source ??= { file };
        if (tool.isDeclaration) this.add(this.declarations, tool, file, "declaration", problems);
        else this.add(this.implementations, tool, file, "code", problems);
      }
    }
    if (found === 0 && invalid === 0) {
      // A file in tools/ is there to define tools: one that defines none is a mistake (a missing `export`, an
      // export of the wrong thing), not something to skip without a word.
      const names = Object.keys(exports).filter((name) => name !== "__esModule");
      const what = names.length === 0 ? "it has no exports" : `its exports are ${names.map((name) => `\`${name}\` (${kindOf(exports[name])})`).join(", ")}`;
      this.brokenFiles.push({
        message: `tool file defines no tool: ${what}`,
        location: { file },
        hint: 'Export a tool, e.g. `export default tool({ name: "get_weather", description: "…", parameters: {…}, run: (args) => … })`; helper code belongs in a sub-folder of tools/ or a file starting with `_`.',
      });
    }
  }

  private loadDeclaredTool(file: string, problems: ConfigProblem[]): void {
    let data: unknown;
    try {
      data = parseData(file);
    } catch (error) {
      this.brokenFiles.push({ message: `cannot parse tool declaration: ${errorText(error)}`, location: { file } });
      return;
    }
    try {
      const tool = functionFromDeclaration(data, { file, baseDir: path.dirname(file) });
      tool.source ??= { file };
      if (tool.isDeclaration) this.add(this.declarations, tool, file, "declaration", problems);
      else this.add(this.implementations, tool, file, "command", problems);
    } catch (error) {
      if (error instanceof ConfigError) this.brokenFiles.push(...error.problems.map((problem) => ({ ...problem, location: problem.location ?? { file } })));
      else this.brokenFiles.push({ message: errorText(error), location: { file } });
    }
  }

  private add(map: Map<string, ToolEntry>, tool: FunctionTool, file: string, kind: ToolEntry["kind"], problems: ConfigProblem[]): void {
    const existing = map.get(tool.name);
    if (existing) {
      const what = kind === "declaration" ? "declarations" : "implementations";
      problems.push({
        message: `two tool ${what} named \`${tool.name}\` in package \`${this.name}\`: ${displayPath(existing.file)} and ${displayPath(file)}`,
        location: { file },
        hint: "Tool names must be unique within a package: rename one of them.",
      });
      return;
    }
    map.set(tool.name, { ref: formatRef(this.name, "tools", tool.name), name: tool.name, packageName: this.name, file, tool, kind });
  }

  private indexFiles(section: Exclude<Section, "tools">, pattern: RegExp, map: Map<string, FileEntry>, problems: ConfigProblem[]): void {
    for (const file of listFiles(path.join(this.dir, section))) {
      if (!pattern.test(file) || file.endsWith(".d.ts")) continue;
      const key = path.basename(file).replace(/\.[^.]+$/, "");
      const existing = map.get(key);
      if (existing) {
        problems.push({ message: `two ${section} named \`${key}\` in package \`${this.name}\`: ${displayPath(existing.file)} and ${displayPath(file)}`, location: { file }, hint: "Rename one of the files." });
        continue;
      }
      map.set(key, { ref: formatRef(this.name, section, key), key, packageName: this.name, file });
    }
  }
}

/** Files directly in a section folder, sorted; helper sub-folders and `_private` files are skipped. */
function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.startsWith("_") && !entry.name.startsWith(".") && !/\.test\.|\.spec\./.test(entry.name))
    .map((entry) => path.join(dir, entry.name))
    .sort();
}

function parseData(file: string): unknown {
  // JSON is YAML; one parser keeps line numbers in its error messages.
  return parseConfigData(readFileSync(file, "utf8"), file);
}

function errorText(error: unknown): string {
  // A parse error's first line is followed by the code frame: it ended in the spaces before it.
  return errorFirstLine(error).trimEnd();
}

/**
 * Where a file that does not parse went wrong: the transpiler's error names it on its second line, ` FILE:LINE:COLUMN`
 * (a 0-based column, in the file as written); its stack names the transpiler, not the file.
 */
function parsePosition(error: unknown, file: string): { line: number; column: number } | undefined {
  const message = error instanceof Error ? error.message : "";
  if (!message.startsWith("ParseError:")) return undefined;
  const at = message.lastIndexOf(`${file}:`);
  const match = at < 0 ? null : /^:(\d+):(\d+)/.exec(message.slice(at + file.length));
  return match ? { line: Number(match[1]), column: Number(match[2]) + 1 } : undefined;
}

/** The line of `file` in an error's stack, so a throwing tool file is pointed at precisely. */
function stackLine(error: unknown, file: string): { line?: number; column?: number } {
  const stack = error instanceof Error ? error.stack ?? "" : "";
  for (const line of stack.split("\n")) {
    const index = line.indexOf(file);
    if (index < 0) continue;
    // The line only: the transpiler wraps the module, which shifts columns on the first line.
    const match = /:(\d+):\d+/.exec(line.slice(index + file.length));
    if (match) return { line: Number(match[1]) };
  }
  return {};
}
