import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ConfigError, PackageFetchError } from "../errors.js";
import { parsePackageSource } from "../config/packageSource.js";
import { OciRegistry } from "./oci/OciRegistry.js";
import { OCI_MEDIA_TYPES, type OciManifest } from "./oci/ociMediaTypes.js";
import { packPackage, type Packed } from "./packPackage.js";

/** Where a package was published, as a source others can add. */
export interface Published {
  source: string;
  files: string[];
}

/**
 * `lllm publish DIR --to npm | oci://REGISTRY/REPO[:TAG]`. npm through npm's own `npm publish` of the packed
 * archive (its registry, scopes, credentials and 2FA as npm handles them); OCI through the distribution API: the
 * archive as the one layer, the manifest's name and version as the config and annotations.
 */
export async function publishPackage(dir: string, to: string, options: { write: (text: string) => void }): Promise<Published> {
  const packed = await packPackage(dir);
  if (to === "npm") return publishToNpm(packed, path.resolve(dir), options);
  const target = to.startsWith("oci://") ? parsePackageSource(to, { location: { file: "--to" } }) : undefined;
  if (target?.kind !== "oci" || target.digest !== undefined) {
    throw new ConfigError("usage_args", `--to ${to}: publish to \`npm\` or to \`oci://REGISTRY/REPO[:TAG]\``, { hint: "e.g. lllm publish --to oci://ghcr.io/acme/weather:1.0.0" });
  }
  const registry = new OciRegistry(target.registry, target.repository);
  const config = Buffer.from(JSON.stringify({ name: packed.manifest.name, ...(packed.manifest.version ? { version: packed.manifest.version } : {}), ...(packed.manifest.description ? { description: packed.manifest.description } : {}) }));
  const configDigest = await registry.pushBlob(config);
  const layerDigest = await registry.pushBlob(packed.archive);
  const manifest: OciManifest = {
    schemaVersion: 2,
    mediaType: OCI_MEDIA_TYPES.manifest,
    artifactType: OCI_MEDIA_TYPES.artifact,
    config: { mediaType: OCI_MEDIA_TYPES.config, digest: configDigest, size: config.length },
    layers: [{ mediaType: OCI_MEDIA_TYPES.layer, digest: layerDigest, size: packed.archive.length, annotations: { "org.opencontainers.image.title": packed.fileName } }],
    annotations: { "org.opencontainers.image.title": packed.manifest.name, ...(packed.manifest.version ? { "org.opencontainers.image.version": packed.manifest.version } : {}) },
  };
  const digest = await registry.pushManifest(target.tag ?? "latest", manifest);
  options.write(`lllm: published ${packed.manifest.name} to oci://${target.registry}/${target.repository}:${target.tag ?? "latest"} (${digest})`);
  return { source: `oci://${target.registry}/${target.repository}@${digest}`, files: packed.files };
}

/** `npm publish` of the packed archive, in the package's folder (its .npmrc applies); npm's output goes to stderr. */
async function publishToNpm(packed: Packed, dir: string, options: { write: (text: string) => void }): Promise<Published> {
  const scratch = mkdtempSync(path.join(tmpdir(), "lllm-publish-"));
  try {
    const file = path.join(scratch, packed.fileName);
    writeFileSync(file, packed.archive);
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.platform === "win32" ? "npm.cmd" : "npm", ["publish", file], { cwd: dir, stdio: ["inherit", process.stderr, process.stderr] });
      child.on("error", reject);
      child.on("close", resolve);
    }).catch((error: NodeJS.ErrnoException) => {
      throw new ConfigError("package_publish_failed", `npm could not be started: ${error.code ?? error.message}`, { hint: "`lllm publish --to npm` runs npm's own publish: install npm (it comes with Node.js)." });
    });
    if (code !== 0) throw new PackageFetchError("package_publish_failed", `npm publish failed (exit ${code}): see npm's message above`, { hint: "npm publishes with its own configuration: `npm login` for the registry in .npmrc, a version not published before." });
    options.write(`lllm: published ${packed.fileName} with npm`);
    return { source: `npm:${packed.npm.name}@${packed.npm.version}`, files: packed.files };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
