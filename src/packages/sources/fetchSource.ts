import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { ConfigError, PackageFetchError } from "../../errors.js";
import type { RemoteSource, TarballSource } from "../../config/packageSource.js";
import type { LockEntry } from "../../registry/installed/lockFile.js";
import { httpRequest } from "../httpRequest.js";
import { formatBytes, PACKAGE_LIMITS } from "../limits.js";
import { nameFrom, type Fetched, type FetchContext } from "./Fetched.js";

export type { Fetched, FetchContext } from "./Fetched.js";

/**
 * Fetch a source: what `locked` pins when given (the exact tarball, commit or digest of the lock, so that an
 * install gets the files that were trusted), else the newest the source accepts.
 */
export async function fetchSource(source: RemoteSource, context: FetchContext, locked?: LockEntry): Promise<Fetched> {
  switch (source.kind) {
    case "npm": {
      const { resolveNpm, fetchNpmTarball } = await import("./npmSource.js");
      const settings = await context.npmSettings();
      const resolved = locked?.resolved !== undefined && locked.tarball !== undefined && locked.version !== undefined ? { version: locked.version, tarballUrl: locked.resolved, tarballIntegrity: locked.tarball } : await resolveNpm(source, settings);
      const archive = await fetchNpmTarball({ ...resolved, label: `${source.name}@${resolved.version}` }, settings);
      return { archive, stripTopFolder: true, fields: { version: resolved.version, resolved: resolved.tarballUrl, tarball: resolved.tarballIntegrity }, defaultName: nameFrom(source.name.replace(/^@[^/]+\//, "")) };
    }
    case "tarball":
      return fetchTarball(source, locked);
    case "git": {
      const { fetchGit } = await import("./gitSource.js");
      return fetchGit(source, context, locked);
    }
    case "oci": {
      const { fetchOci } = await import("./ociSource.js");
      return fetchOci(source, locked);
    }
  }
}

async function fetchTarball(source: TarballSource, locked: LockEntry | undefined): Promise<Fetched> {
  let archive: Buffer;
  if (source.url !== undefined) {
    const answer = await httpRequest(source.url, { maxBytes: PACKAGE_LIMITS.archiveBytes, what: `the tarball ${source.url}` });
    if (answer.status !== 200) throw new PackageFetchError("package_fetch_failed", `the tarball ${source.url}: HTTP ${answer.status}`, { hint: "Check the address; packages already installed keep working from the cache." });
    archive = answer.body;
  } else {
    const file = source.file!;
    if (!existsSync(file)) throw new ConfigError("package_source_invalid", `the tarball ${file} does not exist`, { hint: "Give the path of a .tgz made by `lllm pack` (relative to the project)." });
    if (statSync(file).size > PACKAGE_LIMITS.archiveBytes) throw new ConfigError("package_too_large", `the tarball ${file} is larger than ${formatBytes(PACKAGE_LIMITS.archiveBytes)}`, { hint: "Keep large data out of packages." });
    archive = readFileSync(file);
  }
  const tarball = `sha512-${createHash("sha512").update(archive).digest("base64")}`;
  if (locked?.tarball !== undefined && locked.tarball !== tarball) {
    throw new ConfigError("package_integrity_mismatch", `the tarball ${source.url ?? source.file} is not the one lllm.lock pins (its sha512 differs)`, {
      hint: "Nothing was installed. If the new tarball is expected, run `lllm update` for it (its code is shown first).",
    });
  }
  const base = path.basename(source.url !== undefined ? new URL(source.url).pathname : source.file!).replace(/\.(?:tgz|tar\.gz|tar)$/i, "").replace(/-v?\d+\.\d+\.\d+.*$/, "");
  return { archive, stripTopFolder: true, fields: { resolved: source.url ?? source.text, tarball }, defaultName: nameFrom(base) };
}
