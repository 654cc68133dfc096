import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { isPackageManifest } from "../../config/isPackageManifest.js";
import { LOCK_FILE } from "./lockFile.js";
import { realOrResolved } from "../../util/realPath.js";

/**
 * Manifest files a project may keep its dependencies in, in the order they are looked for (as a package's are):
 * a `package.json` counts only with an `lllm` key.
 */
export const PROJECT_MANIFESTS = ["lllm.toml", "lllm.yaml", "lllm.yml", "package.json"] as const;

/** A project: the folder whose manifest lists the packages it uses, and whose lock pins them. */
export interface Project {
  dir: string;
  /** The manifest, when there is one. */
  manifest?: string;
  /** `lllm.lock` in `dir` (which may not exist yet). */
  lock: string;
}

/**
 * The project `cwd` is in: the nearest folder, walking up, with an `lllm.lock` or a manifest (`lllm.toml`,
 * `lllm.yaml`), no further than the repository's root (a folder with `.git`), the home folder or the root, as the
 * project settings are found. Undefined when there is none.
 */
export function findProject(cwd: string): Project | undefined {
  const home = realOrResolved(homedir());
  for (let folder = path.resolve(cwd); ; folder = path.dirname(folder)) {
    const manifest = PROJECT_MANIFESTS.map((name) => path.join(folder, name)).find((file) => existsSync(file) && (path.basename(file) !== "package.json" || hasLllmKey(file)));
    const lock = path.join(folder, LOCK_FILE);
    if (manifest !== undefined || existsSync(lock)) return { dir: folder, ...(manifest !== undefined ? { manifest } : {}), lock };
    if (path.dirname(folder) === folder || folder === home || existsSync(path.join(folder, ".git"))) return undefined;
  }
}

/**
 * A package.json whose `lllm` key is a package manifest; not an ordinary one, one whose `lllm` holds project
 * settings (`model`, `packages`…), nor one that does not parse.
 */
function hasLllmKey(file: string): boolean {
  try {
    const data = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, "")) as { lllm?: unknown } | null;
    return isPackageManifest(data?.lllm);
  } catch {
    return false;
  }
}
