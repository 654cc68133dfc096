import { isPlainObject } from "../util/isPlainObject.js";
/**
 * `override` merged over `base`: mappings merge key by key, recursively; lists, scalars and null replace (the
 * override wins). Neither input is modified; the result shares no mappings with them.
 */
export function deepMerge(base: unknown, override: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(override)) return override === undefined ? copy(base) : copy(override);
  const result: Record<string, unknown> = copy(base) as Record<string, unknown>;
  for (const [key, value] of Object.entries(override)) {
    setOwn(result, key, Object.hasOwn(result, key) ? deepMerge(result[key], value) : copy(value));
  }
  return result;
}

export { isPlainObject } from "../util/isPlainObject.js";

function copy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copy);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, copy(item)]));
  return value;
}

// A plain assignment of a key named `__proto__` (legal in YAML) would change the prototype instead of adding a key.
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
