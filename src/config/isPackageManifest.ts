import { isPlainObject } from "../util/isPlainObject.js";
import { settingsSchema } from "./settingsSchema.js";

// Keys of a package manifest (schemas/package.schema.json): a package's own package.json#lllm is its manifest,
// not project settings, and must not stop `lllm` from running inside the package's folder.
const MANIFEST_KEYS = ["package", "name", "version", "description", "dependencies"];

/**
 * Whether the `lllm` key of a package.json is a package manifest (a name, a version, dependencies…) rather than
 * project settings (`model`, `packages`, `home`…): the same key holds either.
 */
export function isPackageManifest(value: unknown): boolean {
  const keys = keyKinds(value);
  return keys.manifest && !keys.settings;
}

/** Whether the `lllm` key of a package.json holds project settings: a settings key, and no manifest key. */
export function isProjectSettings(value: unknown): boolean {
  const keys = keyKinds(value);
  return keys.settings && !keys.manifest;
}

/** Whether an object has a key of a package manifest, and one of the project settings. */
function keyKinds(value: unknown): { manifest: boolean; settings: boolean } {
  if (!isPlainObject(value)) return { manifest: false, settings: false };
  return { manifest: MANIFEST_KEYS.some((key) => key in value), settings: Object.keys(settingsSchema().properties as object).some((key) => key in value) };
}
