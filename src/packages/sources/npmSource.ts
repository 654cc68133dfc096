import { createRequire } from "node:module";
import { ConfigError, PackageFetchError } from "../../errors.js";
import type { NpmSource } from "../../config/packageSource.js";
import { httpRequest } from "../httpRequest.js";
import { PACKAGE_LIMITS } from "../limits.js";
import type { NpmSettings } from "./npmConfig.js";

/** A version of an npm package, as its registry lists it. */
export interface NpmResolved {
  version: string;
  tarballUrl: string;
  /** The registry's integrity of the tarball (`dist.integrity`, else one made from `dist.shasum`). */
  tarballIntegrity: string;
}

interface Packument {
  "dist-tags"?: Record<string, string>;
  versions?: Record<string, { version?: string; dist?: { tarball?: string; integrity?: string; shasum?: string } }>;
}

type SemverApi = typeof import("semver");
type SsriApi = typeof import("ssri");
const require = createRequire(import.meta.url);

/**
 * The version of `source` that npm would pick (`npm:NAME@RANGE`): a dist-tag by name, else the `latest` tag when it
 * satisfies the range, else the highest version that does. An unknown package, tag or version is a ConfigError that
 * lists what the registry has.
 */
export async function resolveNpm(source: NpmSource, settings: NpmSettings): Promise<NpmResolved> {
  const packument = await fetchPackument(source.name, settings);
  const tags = packument["dist-tags"] ?? {};
  const versions = packument.versions ?? {};
  const semver = require("semver") as SemverApi;
  const range = source.range ?? "latest";
  let version: string | undefined = tags[range];
  if (version === undefined && semver.validRange(range) !== null) {
    const latest = tags.latest;
    version = latest !== undefined && versions[latest] !== undefined && semver.satisfies(latest, range) ? latest : semver.maxSatisfying(Object.keys(versions), range) ?? undefined;
  }
  const manifest = version === undefined ? undefined : versions[version];
  if (version === undefined || manifest === undefined) {
    const known = Object.keys(versions).sort(semver.rcompare).slice(0, 8);
    throw new ConfigError("package_version_not_found", `npm package \`${source.name}\` has no version matching \`${range}\``, {
      hint: `Its versions: ${known.join(", ") || "none"}${Object.keys(tags).length > 0 ? `; its tags: ${Object.entries(tags).map(([tag, value]) => `${tag} (${value})`).join(", ")}` : ""}.`,
    });
  }
  const dist = manifest.dist ?? {};
  if (typeof dist.tarball !== "string") throw new PackageFetchError("package_fetch_failed", `the registry lists no tarball for ${source.name}@${version}`);
  const ssri = require("ssri") as SsriApi;
  const tarballIntegrity = typeof dist.integrity === "string" ? dist.integrity : typeof dist.shasum === "string" ? ssri.fromHex(dist.shasum, "sha1").toString() : undefined;
  if (tarballIntegrity === undefined) throw new PackageFetchError("package_fetch_failed", `the registry gives no integrity for ${source.name}@${version}: it is not installed unchecked`);
  return { version, tarballUrl: dist.tarball, tarballIntegrity };
}

/** Download a tarball (with the registry's credentials when npm would send them) and check it against its integrity. */
export async function fetchNpmTarball(resolved: { tarballUrl: string; tarballIntegrity: string; label: string }, settings: NpmSettings): Promise<Buffer> {
  const authorization = settings.authorizationFor(resolved.tarballUrl);
  const answer = await httpRequest(resolved.tarballUrl, { headers: authorization ? { authorization } : {}, maxBytes: PACKAGE_LIMITS.archiveBytes, what: `the tarball of ${resolved.label}` });
  if (answer.status !== 200) throw httpFailure(answer.status, `the tarball of ${resolved.label}`, resolved.tarballUrl);
  const ssri = require("ssri") as SsriApi;
  if (ssri.checkData(answer.body, resolved.tarballIntegrity) === false) {
    throw new ConfigError("package_integrity_mismatch", `the tarball of ${resolved.label} does not match its integrity (${resolved.tarballIntegrity.slice(0, 23)}…): it was changed on the way or at the registry`, {
      hint: "Nothing was installed. Try again later; if it persists, tell the registry's or the package's owner.",
    });
  }
  return answer.body;
}

async function fetchPackument(name: string, settings: NpmSettings): Promise<Packument> {
  const registry = settings.registryFor(name);
  const url = `${registry}${name.startsWith("@") ? `@${encodeURIComponent(name.slice(1))}` : encodeURIComponent(name)}`;
  const authorization = settings.authorizationFor(url);
  const answer = await httpRequest(url, {
    headers: { accept: "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8", ...(authorization ? { authorization } : {}) },
    maxBytes: 32 * 1024 * 1024,
    what: `the npm registry ${new URL(registry).host}`,
  });
  if (answer.status === 404) throw new ConfigError("package_version_not_found", `there is no npm package \`${name}\` in ${registry}`, { hint: "Check the name (and its scope); a scope's registry is set in .npmrc as @scope:registry=URL." });
  if (answer.status !== 200) throw httpFailure(answer.status, `the npm registry (for ${name})`, url);
  try {
    return JSON.parse(answer.body.toString("utf8")) as Packument;
  } catch {
    throw new PackageFetchError("package_fetch_failed", `the npm registry answered ${url} with something that is not JSON`);
  }
}

function httpFailure(status: number, what: string, url: string): PackageFetchError {
  const origin = new URL(url).origin;
  if (status === 401 || status === 403) {
    return new PackageFetchError("package_fetch_failed", `${what}: ${origin} refused (HTTP ${status})`, { hint: `Log in as npm would: npm login --registry ${origin}/ (the token goes to ~/.npmrc, which lllm reads).` });
  }
  return new PackageFetchError("package_fetch_failed", `${what}: ${origin} answered HTTP ${status}`, { hint: "Try again later; packages already installed keep working from the cache." });
}
