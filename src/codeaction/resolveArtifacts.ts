import { isPlainObject } from "../tools/JsonSchema.js";
import type { ArtifactStore } from "./ArtifactStore.js";

/**
 * `value` with every `{"$artifact": ref}` (an object with that one key) replaced by the artifact's value, at any
 * depth. A ref this run does not hold is an error for the program that sent it.
 */
export function resolveArtifacts(value: unknown, store: ArtifactStore): unknown {
  if (Array.isArray(value)) return value.map((item) => resolveArtifacts(item, store));
  if (!isPlainObject(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === "$artifact") {
    const record = store.get(value.$artifact);
    if (!record) throw new Error(`no artifact ${JSON.stringify(value.$artifact)} in this run (pass a handle a function returned, or one from artifacts.put)`);
    return store.load(record);
  }
  return Object.fromEntries(keys.map((key) => [key, resolveArtifacts(value[key], store)]));
}
