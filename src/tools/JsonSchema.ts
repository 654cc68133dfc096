/**
 * A JSON Schema object, as the model sees it. Kept as an open record: tool authors may use any keyword, and the
 * schema passes through to the provider unchanged apart from the normalisation in `normalizeParameters`.
 */
export type JsonSchema = Record<string, unknown>;

/** A plain data object (`{}` or `Object.create(null)`), not an array, class instance, or function. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** A short name for a value's kind in error messages: `string`, `array`, `null`, `object`, … */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}
