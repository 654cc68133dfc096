import path from "node:path";

/**
 * `scripted:turns.yaml` written in a file, with its path made absolute against that file's folder, as `packages:`
 * and `base:` are: a tactic or settings file works from any folder. Other names, and absolute paths, as they are.
 */
export function scriptedModelPath<T>(name: T, folder: string): T {
  if (typeof name !== "string" || !name.startsWith("scripted:")) return name;
  const file = name.slice("scripted:".length);
  return (file === "" || path.isAbsolute(file) ? name : `scripted:${path.resolve(folder, file)}`) as T;
}

/** The models of an agent's settings (`model_name`, one or a list, and `fallback_models`), scripted paths resolved. */
export function withScriptedPaths<T extends Record<string, unknown>>(settings: T, folder: string): T {
  const resolved: Record<string, unknown> = { ...settings };
  for (const key of ["model_name", "fallback_models"]) {
    const value = settings[key];
    if (value !== undefined) resolved[key] = Array.isArray(value) ? value.map((name: unknown) => scriptedModelPath(name, folder)) : scriptedModelPath(value, folder);
  }
  return resolved as T;
}
