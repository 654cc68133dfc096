import type { OciSource } from "../../config/packageSource.js";
import type { LockEntry } from "../../registry/installed/lockFile.js";
import { OciRegistry } from "../oci/OciRegistry.js";
import { nameFrom, type Fetched } from "./Fetched.js";

/** A package from an OCI registry: the manifest (by the lock's digest when pinned, else the tag), then its one layer. */
export async function fetchOci(source: OciSource, locked?: LockEntry): Promise<Fetched> {
  const registry = new OciRegistry(source.registry, source.repository);
  const { manifest, digest } = await registry.manifest(locked?.digest ?? source.digest ?? source.tag ?? "latest");
  const layer = manifest.layers[0]!;
  const archive = await registry.blob(layer.digest, layer.size);
  const version = manifest.annotations?.["org.opencontainers.image.version"];
  return {
    archive,
    stripTopFolder: true,
    fields: { ...(version !== undefined ? { version } : {}), resolved: `oci://${source.registry}/${source.repository}@${digest}`, digest },
    defaultName: nameFrom(source.repository.split("/").at(-1)!),
  };
}
