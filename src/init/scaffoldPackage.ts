import { accessSync, constants, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "../errors.js";
import { templateFiles, TEMPLATES, type TemplateName } from "./packageTemplates.js";

export interface ScaffoldOptions {
  /** The folder to fill (created when missing). */
  dir: string;
  template?: string;
  /** Write into a folder that is not empty (files of the same names are replaced; others stay). */
  force?: boolean;
  /** The running lllm's `dist/index.d.ts`, for the tsconfig. */
  lllmTypes: string;
}

export interface ScaffoldResult {
  name: string;
  template: TemplateName;
  files: string[];
}

/** Manifests that make a folder a package already: `init` never writes over one without --force. */
const MANIFESTS = ["lllm.toml", "lllm.yaml", "lllm.yml"];

/**
 * Write a new package into `dir`. Refused (exit 2, with the reason) when `dir` is a file, holds anything (a
 * package above all) unless `force`, or cannot be written to.
 */
export function scaffoldPackage(options: ScaffoldOptions): ScaffoldResult {
  const template = (options.template ?? "agent") as TemplateName;
  if (!TEMPLATES.includes(template)) {
    throw new ConfigError("usage_template", `unknown template \`${options.template}\``, { location: { file: "--template" }, hint: `choose one of: ${TEMPLATES.join(", ")}` });
  }
  const dir = path.resolve(options.dir);
  const existing = inspect(dir);
  if (existing === "file") throw new ConfigError("init_target_invalid", `${options.dir} is a file, not a folder`, { hint: "give a new folder's path (lllm init my-package)" });
  if (existing !== undefined && existing.length > 0 && !options.force) {
    const manifest = existing.find((name) => MANIFESTS.includes(name));
    throw new ConfigError("init_target_invalid", manifest ? `${options.dir} is a package already (it has ${manifest})` : `${options.dir} is not empty (${existing.length} entr${existing.length === 1 ? "y" : "ies"})`, {
      hint: "give a new folder, or --force to write the template's files into it (files of the same names are replaced)",
    });
  }
  // Before writing anything: a folder we cannot write to fails as a whole, not halfway.
  const writable = existing === undefined ? nearestExisting(dir) : dir;
  try {
    accessSync(writable, constants.W_OK);
  } catch {
    throw new ConfigError("init_target_invalid", `cannot write to ${writable}: permission denied`, { hint: "choose a folder you may write to" });
  }
  const name = packageName(dir);
  const files = templateFiles(template, { name, lllmTypes: options.lllmTypes });
  try {
    makeFolder(dir);
    for (const [relative, text] of Object.entries(files)) {
      const file = path.join(dir, relative);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
    }
  } catch (error) {
    throw new ConfigError("init_target_invalid", `cannot write the package into ${options.dir}: ${(error as Error).message}`, { hint: "choose a folder you may write to", cause: error });
  }
  return { name, template, files: Object.keys(files) };
}

/**
 * Create `dir` and its missing parents one at a time: Node's recursive mkdirSync never returns when the kernel
 * answers ENOENT for a parent that exists (a folder under /proc), where this fails at once.
 */
function makeFolder(dir: string): void {
  const missing: string[] = [];
  for (let current = dir; inspect(current) === undefined && path.dirname(current) !== current; current = path.dirname(current)) missing.unshift(current);
  for (const folder of missing) mkdirSync(folder);
}

/** `undefined`: nothing there; `"file"`: a file (or something else that is not a folder); else the folder's entries. */
function inspect(dir: string): string[] | "file" | undefined {
  let stat;
  try {
    stat = statSync(dir);
  } catch {
    return undefined;
  }
  if (!stat.isDirectory()) return "file";
  try {
    return readdirSync(dir);
  } catch (error) {
    throw new ConfigError("init_target_invalid", `cannot read ${dir}: ${(error as Error).message}`, { hint: "choose a folder you may read and write" });
  }
}

function nearestExisting(dir: string): string {
  for (let current = path.dirname(dir); ; current = path.dirname(current)) {
    if (inspect(current) !== undefined || path.dirname(current) === current) return current;
  }
}

/** The folder's name as a package name: an identifier (letters, digits, `_`), starting with a letter. */
export function packageName(dir: string): string {
  const base = path.basename(dir).toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/^_+|_+$/g, "");
  if (base === "") return "my_package";
  return /^[a-z]/.test(base) ? base : `pkg_${base}`;
}
