/**
 * A JSON Schema object, as the model sees it. Kept as an open record: tool authors may use any keyword, and the
 * schema passes through to the provider unchanged apart from the normalisation in `normalizeParameters`.
 */
export type JsonSchema = Record<string, unknown>;

export { isPlainObject } from "../util/isPlainObject.js";

/** A short name for a value's kind in error messages: `string`, `array`, `null`, `object`, … */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}
