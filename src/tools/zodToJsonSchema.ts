import type { z } from "zod";
import { zodModule } from "../util/lazyZod.js";
import type { JsonSchema } from "./JsonSchema.js";
import { toolInvalid } from "./toolInvalid.js";

/**
 * Whether a value is a zod 4 schema. Checked by its `_zod` internals rather than `instanceof`, so that a schema
 * built by another copy of zod (a tool file loaded through a transpiler, a package with its own node_modules, the
 * CommonJS build) is recognised too.
 */
export function isZodSchema(value: unknown): boolean {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  const internals = (value as { _zod?: unknown })._zod;
  return typeof internals === "object" && internals !== null;
}

/**
 * Convert a zod schema to JSON Schema with our copy of zod (it reads the schema's definition, so foreign copies
 * convert too). `io: "input"` describes what the model must send: a field with `.default()` is optional.
 * `where` names the tool in error messages.
 */
export function zodToJsonSchema(schema: unknown, where: string, file?: string): JsonSchema {
  let json: unknown;
  try {
    json = zodModule.z.toJSONSchema(schema as z.ZodType, { io: "input" });
  } catch (error) {
    throw toolInvalid(`${where}: its zod parameters cannot be turned into JSON Schema: ${error instanceof Error ? error.message : String(error)}`, {
      hint: "Use JSON-compatible zod types for tool parameters (strings, numbers, booleans, enums, arrays, objects); a date can be a z.string() with a description of its format.",
      file,
      cause: error,
    });
  }
  return tidy(json) as JsonSchema;
}

/**
 * Two cosmetic fixes to zod's output, applied to every object in it:
 * - zod writes `z.number().int()` as an integer between ±(2^53 - 1). Those bounds say nothing to a model and
 *   only cost tokens, so they go; bounds the author chose stay.
 * - `type` comes first, as in schemas written by hand and in LLLM's output (zod puts `default`/`description`
 *   first when `.default()` comes before `.describe()`), so the same tool prints the same JSON either way.
 */
function tidy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(tidy);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = "type" in value ? { type: tidy((value as { type: unknown }).type) } : {};
  for (const [key, item] of Object.entries(value)) {
    if (key === "type") continue;
    if (key === "minimum" && item === Number.MIN_SAFE_INTEGER) continue;
    if (key === "maximum" && item === Number.MAX_SAFE_INTEGER) continue;
    out[key] = tidy(item);
  }
  return out;
}
