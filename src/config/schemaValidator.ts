import type { AnySchemaObject, ValidateFunction } from "ajv";
import { createRequire } from "node:module";
import { requireCompiled } from "../util/codeCache.js";
import { packageSchema } from "./packageSchema.js";
import { settingsSchema } from "./settingsSchema.js";
import { tacticSchema } from "./tacticSchema.js";

/** The static schemas, each compiled at build time (scripts/build-validators.js). */
export type SchemaName = "tactic" | "test" | "manifest" | "proxyYaml" | "proxyCode" | "settings";

const require = createRequire(import.meta.url);
const validators = new Map<SchemaName, ValidateFunction>();

/**
 * The validator of a static schema, named or given as the object its accessor returns (`tacticSchema()`): code
 * ajv generated at build time (generated/validators/<name>.cjs, required on first use), so that nothing is compiled
 * at start-up and a command loads only the validators it uses. Its errors are those of a validator compiled at run
 * time with `allErrors` and `verbose`. Any other schema is a programming error: add it to the build script.
 */
export function schemaValidator(schema: SchemaName | AnySchemaObject): ValidateFunction {
  const name = typeof schema === "string" ? schema : schema === tacticSchema() ? "tactic" : schema === packageSchema() ? "manifest" : schema === settingsSchema() ? "settings" : undefined;
  if (!name) throw new Error("validateAgainstSchema: no validator was generated for this schema; add it to scripts/build-validators.js");
  let validate = validators.get(name);
  if (validate === undefined) {
    // The path goes through the folder's name: it holds from dist/<folder>/ and from the bundle in dist/bundle/ alike.
    // Compiled from V8's code cache where lllm keeps one (util/codeCache.ts): the files are large and read every run.
    validate = (requireCompiled(require.resolve(`../config/generated/validators/${name}.cjs`), require) as Record<SchemaName, ValidateFunction>)[name];
    validators.set(name, validate);
  }
  return validate;
}
