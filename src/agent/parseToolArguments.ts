import { isPlainObject, kindOf } from "../tools/JsonSchema.js";

/** The arguments of a tool call as the model sent them, parsed; or why they could not be. */
export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

/**
 * Parse the raw JSON text of a call's arguments. Models get this wrong (truncated JSON, an array, a bare string),
 * so failure is a value for the loop to send back, never an exception.
 */
export function parseToolArguments(raw: string): ParsedArguments {
  // Many models send an empty string, not `{}`, for a call without arguments.
  if (raw.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
  if (!isPlainObject(value)) return { ok: false, reason: `expected an object, got ${kindOf(value)}` };
  return { ok: true, value };
}
