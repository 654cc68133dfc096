import { isRemoteSource, parsePackageSource, sourceKey } from "../config/packageSource.js";
import { openProject } from "./projectPackages.js";

/** A package whose source now gives something else than the lock has. */
export interface OutdatedPackage {
  name: string;
  source: string;
  /** What the lock has: a version, a commit or a digest. */
  current: string;
  /** What `lllm update` would lock: the newest within the range, the ref's commit, the tag's digest. */
  wanted: string;
  /** npm: the `latest` tag, which may be outside the range. */
  latest?: string;
}

/**
 * `lllm outdated`: ask each source what it gives now (npm's versions, the git ref, the OCI tag) and compare with
 * the lock. Tarballs and sources pinned by commit or digest cannot move and are not asked.
 */
export async function outdatedPackages(options: { cwd: string }): Promise<OutdatedPackage[]> {
  const { project, lock, dependencies } = await openProject(options.cwd);
  const rows: OutdatedPackage[] = [];
  for (const dependency of dependencies) {
    if (!isRemoteSource(dependency.path)) continue;
    const source = parsePackageSource(dependency.path, { from: project.dir, location: dependency.location })!;
    const key = sourceKey(source, project.dir);
    const entry = lock.packages[key];
    const name = dependency.alias ?? entry?.name ?? key;
    if (source.kind === "npm") {
      const { loadNpmSettings } = await import("./sources/npmConfig.js");
      const { resolveNpm } = await import("./sources/npmSource.js");
      const settings = await loadNpmSettings(project.dir);
      const wanted = (await resolveNpm(source, settings)).version;
      const latest = (await resolveNpm({ ...source, range: "latest" }, settings)).version;
      if (entry?.version !== wanted || wanted !== latest) rows.push({ name, source: key, current: entry?.version ?? "not locked", wanted, latest });
    } else if (source.kind === "git" && !(source.ref !== undefined && /^[0-9a-f]{40}$/.test(source.ref))) {
      const { resolveRef } = await import("./sources/gitSource.js");
      const wanted = await resolveRef(source);
      if (entry?.commit !== wanted) rows.push({ name, source: key, current: entry?.commit?.slice(0, 12) ?? "not locked", wanted: wanted.slice(0, 12) });
    } else if (source.kind === "oci" && source.digest === undefined) {
      const { OciRegistry } = await import("./oci/OciRegistry.js");
      const { digest } = await new OciRegistry(source.registry, source.repository).manifest(source.tag ?? "latest");
      if (entry?.digest !== digest) rows.push({ name, source: key, current: entry?.digest?.slice(0, 19) ?? "not locked", wanted: digest.slice(0, 19) });
    }
  }
  return rows;
}
