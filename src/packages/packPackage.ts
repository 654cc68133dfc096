import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ConfigError } from "../errors.js";
import { readManifest, type PackageManifest } from "../registry/manifest.js";
import { formatBytes, PACKAGE_LIMITS } from "./limits.js";
import { parseConfigData } from "../config/parseConfigData.js";
import { isPackageRef } from "../config/isPackageRef.js";
import { resolvePackageEntry } from "../config/packageSource.js";
import { escapesFolder } from "../config/packageConfinement.js";
import { isPlainObject } from "../util/isPlainObject.js";

/** A packed package: the archive, and the files in it. */
export interface Packed {
  archive: Buffer;
  /** The files, `/`-separated, as they are under `package/` in the archive. */
  files: string[];
  manifest: PackageManifest;
  /** `NAME-VERSION.tgz`. */
  fileName: string;
  /** The name and version npm knows it by (its package.json's). */
  npm: { name: string; version: string };
}

/** Folders and files never packed: version control, installed dependencies, and dot files (`.env`, `.npmrc`: secrets). */
const SKIPPED = /^(?:\..*|node_modules|__pycache__)$/;

/**
 * Pack a package folder into a `.tgz` as npm lays one out (every file under `package/`), so the same archive is
 * an npm package, an OCI layer and a tarball source. Only plain files inside the folder are packed: a link is an
 * error (it could bring in a file from outside), and dot files, `node_modules` and `.git` are left out. A package
 * with no package.json gets one (its name and version from the manifest), which npm needs to publish it. The
 * archive is the same for the same files (no times, owners or modes beyond the executable bit).
 */
export async function packPackage(dir: string): Promise<Packed> {
  const root = path.resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new ConfigError("package_not_found", `${dir} is not a folder`, { hint: "Give the package's folder (default: the current one)." });
  const manifest = await readManifest(root);
  refuseLocalDependencies(manifest);
  const files = listPackable(root);
  if (files.length === 0) {
    throw new ConfigError("package_invalid", `${root} holds nothing to pack: no files (dot files, node_modules and .tgz files are left out)`, {
      hint: "Run lllm pack in a package's folder (tools/, prompts/, tactics/, lllm.toml), or give that folder: lllm pack DIR. `lllm init` makes one.",
    });
  }
  refusePathsOutside(root, files);
  const staging = mkdtempSync(path.join(tmpdir(), "lllm-pack-"));
  try {
    let bytes = 0;
    for (const relative of files) {
      const target = path.join(staging, "package", ...relative.split("/"));
      mkdirSync(path.dirname(target), { recursive: true });
      copyFileSync(path.join(root, ...relative.split("/")), target);
      bytes += statSync(target).size;
    }
    if (bytes > PACKAGE_LIMITS.unpackedBytes) throw new ConfigError("package_too_large", `${dir} holds ${formatBytes(bytes)}: more than a package may (${formatBytes(PACKAGE_LIMITS.unpackedBytes)})`, { hint: "Keep large data out of packages." });
    let npm = { name: manifest.name.toLowerCase(), version: manifest.version ?? "0.0.0" };
    if (files.includes("package.json")) {
      const data = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
      npm = { name: typeof data.name === "string" ? data.name : npm.name, version: typeof data.version === "string" ? data.version : npm.version };
    } else {
      writeFileSync(path.join(staging, "package", "package.json"), `${JSON.stringify({ ...npm, ...(manifest.description ? { description: manifest.description } : {}), ...(manifest.file === undefined ? { lllm: { name: manifest.name } } : {}) }, null, 2)}\n`);
      files.push("package.json");
      files.sort();
    }
    const { create } = await import("tar");
    const out = path.join(staging, "package.tgz");
    await create({ gzip: true, cwd: staging, file: out, portable: true, mtime: new Date(0), noDirRecurse: true }, files.map((file) => `package/${file}`));
    const archive = readFileSync(out);
    // The version npm publishes (package.json's, when the package has one) names the archive too; a version is
    // the package author's text, so it cannot lead the file out of the folder (`1.0.0/../../x`).
    return { archive, files, manifest, fileName: `${manifest.name}-${npm.version.replace(/[^\w.+-]/g, "-")}.tgz`, npm };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function listPackable(root: string): string[] {
  const found: string[] = [];
  const walk = (folder: string, prefix: string): void => {
    for (const name of readdirSync(folder).sort()) {
      if (SKIPPED.test(name) || (prefix === "" && /\.tgz$/.test(name))) continue;
      const file = path.join(folder, name);
      const relative = prefix === "" ? name : `${prefix}/${name}`;
      const stat = lstatSync(file);
      if (stat.isSymbolicLink()) throw new ConfigError("package_archive_invalid", `${relative} is a link: a package holds plain files only`, { location: { file }, hint: "Copy the file into the package instead (a link could bring in a file from outside it)." });
      if (stat.isDirectory()) walk(file, relative);
      else if (stat.isFile()) found.push(relative);
    }
  };
  walk(root, "");
  return found;
}

/** Sources another machine can fetch: a registry, an OCI registry, a URL, a git server. */
const SHAREABLE_SOURCE = /^(?:npm:|oci:\/\/|https?:\/\/|git\+(?:https?|ssh):)/;

/**
 * A packed package is installed elsewhere: a dependency on a folder, a tarball file or a git repository of this
 * machine would point at nothing there (the install would fail, or find another machine's folder of that name).
 */
function refuseLocalDependencies(manifest: PackageManifest): void {
  const local = manifest.dependencies.find((dependency) => !SHAREABLE_SOURCE.test(dependency.path));
  if (!local) return;
  throw new ConfigError("package_invalid", `the package depends on \`${local.path}\`, which exists only on this machine: a packed package cannot take it along`, {
    location: local.location,
    hint: "Share that package first (lllm publish) and depend on its source (npm:NAME@RANGE, oci://…, git+https://…), then pack this one.",
  });
}

/**
 * An installed package's tactic names files by path only inside its package (see `confinementProblem`): a tactic
 * whose `base:` or `packages:` reaches outside the folder works here and would be refused wherever it is installed.
 */
function refusePathsOutside(root: string, files: readonly string[]): void {
  // Every data file: a tactic's `base:` may be any file of the package (tactics/shared/common.yaml, common/base.yaml).
  for (const relative of files.filter((name) => /\.(?:ya?ml|json)$/i.test(name) && name !== "package.json")) {
    const file = path.join(root, ...relative.split("/"));
    let data: unknown;
    try {
      data = parseConfigData(readFileSync(file, "utf8"), file);
    } catch {
      continue; // a tactic that does not parse is validate's to report
    }
    if (!isPlainObject(data)) continue;
    const folder = path.dirname(file);
    const base = typeof data.base === "string" && !isPackageRef(data.base) && escapesFolder("base", path.resolve(folder, data.base), root) ? data.base : undefined;
    const packages = Array.isArray(data.packages) ? data.packages.filter((entry): entry is string => typeof entry === "string") : [];
    const outside = base ?? packages.find((entry) => escapesFolder("package", resolvePackageEntry(entry, folder), root));
    if (outside === undefined) continue;
    throw new ConfigError("package_invalid", `${relative} names \`${outside}\` ${base !== undefined ? "as its base" : "in its packages"}, outside the package: an installed copy of the package refuses to use it`, {
      location: { file },
      hint: base !== undefined ? "Put that file in the package (e.g. tactics/common.yaml) or name a tactic of another package by ref (pkg.tactics:name)." : "Put that package's files in this one, or depend on it by its source (npm:NAME@RANGE, oci://…, git+https://…).",
    });
  }
}
