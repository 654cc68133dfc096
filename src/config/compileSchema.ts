import { Ajv } from "ajv";
import type { AnySchemaObject, ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS: under NodeNext its default import is the whole module, whose `default` is the plugin.
const addFormats = addFormatsModule.default;

let ajv: Ajv | undefined;
const compiled = new WeakMap<object, ValidateFunction>();

/**
 * A validator for `schema`, compiled once per schema object on one shared ajv instance. `allErrors` so that a file's
 * problems are all reported at once; `verbose` so every error carries its parent schema (the allowed keys behind a
 * "did you mean" hint); `strict: false` so editor-only keywords such as `patternErrorMessage` are allowed.
 */
export function compileSchema(schema: AnySchemaObject): ValidateFunction {
  const cached = compiled.get(schema);
  if (cached) return cached;
  if (!ajv) {
    ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
    addFormats(ajv, ["date"]);
  }
  // ajv keeps schemas by $id: a second object with the same $id would be refused, so reuse the first one.
  const validate = (typeof schema.$id === "string" ? ajv.getSchema(schema.$id) : undefined) ?? ajv.compile(schema);
  compiled.set(schema, validate);
  return validate;
}
