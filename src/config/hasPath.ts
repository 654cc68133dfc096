import { isPlainObject } from "./deepMerge.js";

/** True when `path` names a value present in `data`. A list index may be given as a number or as digits. */
export function hasPath(data: unknown, path: ReadonlyArray<string | number>): boolean {
  let current = data;
  for (const segment of path) {
    if (Array.isArray(current)) {
      const index = typeof segment === "number" ? segment : /^\d+$/.test(segment) ? Number(segment) : -1;
      if (!Number.isInteger(index) || index < 0 || index >= current.length) return false;
      current = current[index];
    } else if (isPlainObject(current) && Object.hasOwn(current, segment)) {
      current = current[segment];
    } else {
      return false;
    }
  }
  return true;
}
