import type { Ajv2020 } from "ajv/dist/2020.js";
import { requireNow } from "./lazyModule.js";

let shared: Ajv2020 | undefined;

/**
 * The one Ajv for the schemas only known at run time (tools' parameters, a tactic's input as a tool), created on
 * first use: commands that call no tool never load ajv. It caches compiled schemas. `useDefaults` fills defaults
 * in, `allErrors` lets the model fix every mistake in one retry, `verbose` gives each error its schema so a message
 * can name the expected type, and `strict: false` accepts the extra keywords tool authors and zod write (`title`,
 * `examples`, …). Schemas are not checked against the meta-schema (`validateSchema: false`, `meta: false`), which
 * would compile the whole 2020-12 meta-schema on first use: parameter schemas are checked by
 * `checkParameterSchemas`, and what is left (a keyword of the wrong shape) still fails to compile.
 */
export function sharedAjv(): Ajv2020 {
  if (!shared) {
    const { Ajv2020: AjvClass } = requireNow<typeof import("ajv/dist/2020.js")>("ajv/dist/2020.js");
    shared = new AjvClass({ allErrors: true, useDefaults: true, verbose: true, strict: false, allowUnionTypes: true, validateSchema: false, meta: false });
    // ajv-formats is CommonJS: its export is the plugin, with the plugin again as `default`.
    requireNow<typeof import("ajv-formats")>("ajv-formats").default(shared);
  }
  return shared;
}
