import { readFileSync } from "node:fs";
import type { AnySchemaObject } from "ajv";

const cache = new Map<string, AnySchemaObject>();

/**
 * A JSON Schema from the package's `schemas/` folder, parsed once. The URL is relative to this module, which sits
 * two levels below the package root both in `src/config` (tests) and in `dist/config` (the build).
 */
export function readSchema(name: string): AnySchemaObject {
  let schema = cache.get(name);
  if (!schema) {
    schema = JSON.parse(readFileSync(new URL(`../../schemas/${name}`, import.meta.url), "utf8")) as AnySchemaObject;
    cache.set(name, schema);
  }
  return schema;
}
