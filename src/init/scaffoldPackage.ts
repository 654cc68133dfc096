import { accessSync, closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, statSync, symlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "../errors.js";
import { gitignore } from "./commonFiles.js";
import { templateFiles, TEMPLATES, type TemplateName } from "./packageTemplates.js";

export interface ScaffoldOptions {
  /** The folder to fill (created when missing). */
  dir: string;
  template?: string;
  /** Write into a folder that is not empty (files of the same names are replaced; others stay). */
  force?: boolean;
  /** The running lllm's package folder: `node_modules/lllm` links to it, for the tools' types. */
  lllmRoot: string;
}

export interface ScaffoldResult {
  name: string;
  template: TemplateName;
  files: string[];
}

/** Manifests that make a folder a package already: `init` never writes over one without --force. */
const MANIFESTS = ["lllm.toml", "lllm.yaml", "lllm.yml"];

/** Where the tools' types are found (see commonFiles' tsconfig): a link made when the folder has none. */
const TYPES_LINK = "node_modules/lllm";

/**
 * Write a new package into `dir`. Refused (exit 2, with the reason) when `dir` is a file, holds anything (a
 * package above all) unless `force`, cannot be written to, or (with `force`) has a symbolic link where a file of
 * the template would go: lllm writes files in the folder, never through a link to somewhere else.
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
  const files = templateFiles(template, { name });
  if (!existsSync(path.join(dir, ".gitignore"))) files[".gitignore"] = gitignore;
  if (existing !== undefined) refuseLinks(dir, options.dir, [...Object.keys(files), TYPES_LINK]);
  const written = Object.keys(files);
  try {
    makeFolder(dir);
    for (const [relative, text] of Object.entries(files)) {
      const file = path.join(dir, relative);
      mkdirSync(path.dirname(file), { recursive: true });
      writeNoFollow(file, text);
    }
    if (linkTypes(dir, options.lllmRoot)) written.push(TYPES_LINK);
  } catch (error) {
    throw new ConfigError("init_target_invalid", `cannot write the package into ${options.dir}: ${(error as Error).message}`, { hint: "choose a folder you may write to", cause: error });
  }
  return { name, template, files: written };
}

/**
 * Refuse, before anything is written, when a file of the template, or a folder on its way (`scripts/`, `tools/`),
 * is a symbolic link in `dir`: writing it would write wherever the link points (a clone's \`tools -> ~/.ssh\`).
 * `node_modules/lllm` itself may be a link (it is one: see linkTypes), but not the folder above it.
 */
function refuseLinks(dir: string, shown: string, relatives: string[]): void {
  const links = new Set<string>();
  for (const relative of relatives) {
    const parts = relative.split("/");
    const checked = relative === TYPES_LINK ? parts.length - 1 : parts.length;
    for (let depth = 1; depth <= checked; depth += 1) {
      const part = parts.slice(0, depth).join("/");
      if (isLink(path.join(dir, part))) links.add(part);
    }
  }
  if (links.size === 0) return;
  const listed = [...links].sort().map((part) => `${part} -> ${readlinkSync(path.join(dir, part))}`);
  throw new ConfigError("init_target_invalid", `${shown} has symbolic links where the template writes: ${listed.join(", ")}; lllm init does not write through links`, {
    hint: `remove ${links.size === 1 ? "it" : "them"} (rm ${[...links].sort().map((part) => path.join(shown, part)).join(" ")}), or give a new folder`,
  });
}

function isLink(target: string): boolean {
  try {
    return lstatSync(target).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Create or replace `file`, refusing (ELOOP) when it became a link after the check: never written through. */
function writeNoFollow(file: string, text: string): void {
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0), 0o666);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * `node_modules/lllm` -> the running lllm, as `npm link lllm` makes it, so that `tsc` finds lllm's types at once;
 * a folder that has one already (a link, an installed lllm) keeps it. Whether it was made.
 */
function linkTypes(dir: string, lllmRoot: string): boolean {
  const link = path.join(dir, TYPES_LINK);
  if (isLink(link) || existsSync(link)) return false;
  mkdirSync(path.dirname(link), { recursive: true });
  symlinkSync(lllmRoot, link, "junction");
  return true;
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

/** Latin letters that do not decompose into a letter and an accent, written as their usual ASCII spelling. */
const LETTERS: Record<string, string> = { ß: "ss", æ: "ae", œ: "oe", ø: "o", ł: "l", đ: "d", þ: "th" };

/**
 * The folder's name as a package name: an identifier (letters, digits, `_`), starting with a letter. Accented
 * letters lose their accent first (`Über` is `uber`, not `ber`).
 */
export function packageName(dir: string): string {
  const plain = path.basename(dir).normalize("NFKD").replace(/\p{M}+/gu, "").replace(/[ßæœøłđþ]/giu, (letter) => LETTERS[letter.toLowerCase()] ?? letter);
  const base = plain.toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/^_+|_+$/g, "");
  if (base === "") return "my_package";
  return /^[a-z]/.test(base) ? base : `pkg_${base}`;
}
