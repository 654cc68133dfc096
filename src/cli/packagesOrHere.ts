import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { distrustFile, distrustFolder, trustHint } from "../config/distrust.js";
import { warn } from "./output.js";

/** What makes a folder a package: a manifest, or one of the sections (README: "Every part is optional"). */
const MANIFESTS = ["lllm.toml", "lllm.yaml", "lllm.yml"];
const SECTIONS = ["tools", "tactics", "proxies", "prompts"];

/**
 * The `--package` folders given, or, when none is, the current folder if it is a package (a manifest: lllm.toml,
 * lllm.yaml, or package.json with an `lllm` key; or, with no manifest, a tools/, tactics/, proxies/ or prompts/
 * folder): `lllm tools list` inside a package lists that package, as `-p .` would. A folder that is not this
 * user's (see `distrustFolder`), as `/tmp` is not, is no package unless named with `-p`: its code would run.
 */
export function packagesOrHere(packages: string[] | undefined, here = process.cwd()): string[] | undefined {
  if (packages !== undefined && packages.length > 0) return packages;
  const cwd = packageFolderOf(here);
  const marker = packageMarker(cwd);
  if (marker === undefined) return packages;
  const markerDistrust = distrustFile(marker);
  const distrust = distrustFolder(cwd) ?? (markerDistrust === undefined ? undefined : `its ${path.basename(marker)}: ${markerDistrust}`);
  if (distrust === undefined) return [cwd];
  warn(`${cwd} is not taken as a package without -p: ${distrust} (${trustHint(cwd)})`);
  return packages;
}

/**
 * `packagesOrHere`, but the current folder only when it has a manifest: for a lookup that does not need the folder's
 * own code, in a folder that merely has a `tools/` (many repositories do), whose files would run to list them.
 */
export function packagesOrManifestHere(packages: string[] | undefined, here = process.cwd()): string[] | undefined {
  if (packages !== undefined && packages.length > 0) return packages;
  const cwd = packageFolderOf(here);
  const marker = packageMarker(cwd);
  return marker !== undefined && !SECTIONS.some((name) => marker === path.join(cwd, name)) ? packagesOrHere(packages, cwd) : packages;
}

/**
 * The folder taken for the package: `dir`, or, when `dir` is a section folder (tools/, tactics/…) of a package with a
 * manifest, that package: `lllm tools list` in a package's tools/ lists the package, as npm finds package.json above.
 */
function packageFolderOf(dir: string): string {
  if (packageMarker(dir) !== undefined || !SECTIONS.includes(path.basename(dir))) return dir;
  const parent = path.dirname(dir);
  return MANIFESTS.some((name) => existsSync(path.join(parent, name))) ? parent : dir;
}

/** The manifest or section that makes `dir` a package, or undefined. */
function packageMarker(dir: string): string | undefined {
  const manifest = MANIFESTS.map((name) => path.join(dir, name)).find((file) => existsSync(file));
  if (manifest !== undefined) return manifest;
  const packageJson = path.join(dir, "package.json");
  try {
    const data = JSON.parse(readFileSync(packageJson, "utf8")) as { lllm?: unknown };
    if (typeof data === "object" && data !== null && data.lllm !== undefined) return packageJson;
  } catch {
    // no package.json, or not one of lllm's
  }
  return SECTIONS.map((name) => path.join(dir, name)).find((folder) => isFolder(folder));
}

function isFolder(target: string): boolean {
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}
