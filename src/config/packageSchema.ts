import type { AnySchemaObject } from "ajv";
import { readSchema } from "./readSchema.js";

/** The JSON Schema of a package manifest (`schemas/package.schema.json`), parsed; the same object on every call. */
export function packageSchema(): AnySchemaObject {
  return readSchema("package.schema.json");
}
