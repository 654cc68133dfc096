import type { AnySchemaObject } from "ajv";
import { readSchema } from "./readSchema.js";

/** The JSON Schema of a tactic file (`schemas/tactic.schema.json`), parsed; the same object on every call. */
export function tacticSchema(): AnySchemaObject {
  return readSchema("tactic.schema.json");
}
