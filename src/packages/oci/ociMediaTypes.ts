/**
 * The media types of an lllm package as an OCI artifact (documented in the README): an OCI image manifest whose
 * `artifactType` says it is a package, with a small JSON config (name, version, description) and one layer, the
 * package's `.tgz` as `lllm pack` makes it.
 */
export const OCI_MEDIA_TYPES = {
  manifest: "application/vnd.oci.image.manifest.v1+json",
  artifact: "application/vnd.lllm.package.v1",
  config: "application/vnd.lllm.package.config.v1+json",
  layer: "application/vnd.lllm.package.layer.v1.tar+gzip",
} as const;

/** An OCI content descriptor. */
export interface OciDescriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

export interface OciManifest {
  schemaVersion: 2;
  mediaType: string;
  artifactType?: string;
  config: OciDescriptor;
  layers: OciDescriptor[];
  annotations?: Record<string, string>;
}
