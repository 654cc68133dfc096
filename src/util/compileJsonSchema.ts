import type { Ajv2020, ValidateFunction } from "ajv/dist/2020.js";
import { requireNow } from "./lazyModule.js";

let ajv: Ajv2020 | undefined;
const compiled = new WeakMap<object, ValidateFunction>();

/**
 * A validator for a JSON Schema the user wrote (a tactic's `input` or `output`), compiled once per schema object:
 * a tactic run many times (or used as a tool) must not recompile, nor re-register a schema's `$id`.
 */
export function compileJsonSchema(schema: Record<string, unknown>): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    // Its own instance, without `useDefaults` (the shared one fills defaults into the data); created on first use,
    // without compiling the meta-schema.
    ajv ??= new (requireNow<typeof import("ajv/dist/2020.js")>("ajv/dist/2020.js").Ajv2020)({ allErrors: true, strict: false, validateSchema: false, meta: false });
    const id = typeof schema.$id === "string" ? schema.$id : undefined;
    validate = (id ? ajv.getSchema(id) : undefined) ?? ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}
