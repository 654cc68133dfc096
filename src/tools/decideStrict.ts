import { isPlainObject, type JsonSchema } from "./JsonSchema.js";

const SCALAR_TYPES = new Set(["string", "number", "integer", "boolean"]);

/**
 * The automatic strict decision (seed 000, Step 1): strict when every parameter is required and flat (a string,
 * number, integer, boolean, enum, or an array of these), which is what strict function calling accepts. An
 * object, a nested array or an `anyOf` keeps it off. No parameters at all is strict.
 */
export function decideStrict(properties: Record<string, JsonSchema>, required: readonly string[]): boolean {
  return Object.entries(properties).every(([name, schema]) => required.includes(name) && isFlat(schema));
}

function isFlat(schema: JsonSchema): boolean {
  if (isScalar(schema)) return true;
  return schema.type === "array" && isPlainObject(schema.items) && isScalar(schema.items);
}

function isScalar(schema: JsonSchema): boolean {
  if ("anyOf" in schema || "oneOf" in schema || "allOf" in schema) return false;
  if (Array.isArray(schema.enum) || "const" in schema) return true;
  return typeof schema.type === "string" && SCALAR_TYPES.has(schema.type);
}
