import { Ajv2020 } from "ajv/dist/2020.js";
import type { JsonSchema } from "./JsonSchema.js";
import { toolInvalid } from "./toolInvalid.js";

let ajv: Ajv2020 | undefined;

/**
 * Check each parameter's schema against the JSON Schema meta-schema when the tool is defined, so that a typo such
 * as `type: strin` is reported at load time with the file, rather than as a provider's 400 in the middle of a run.
 */
export function checkParameterSchemas(properties: Record<string, JsonSchema>, options: { where: string; file?: string | undefined }): void {
  ajv ??= new Ajv2020({ strict: false, allowUnionTypes: true });
  for (const [name, schema] of Object.entries(properties)) {
    if (ajv.validateSchema(schema)) continue;
    const problems = (ajv.errors ?? []).map((error) => `${error.instancePath || "(the schema)"} ${error.message ?? "is invalid"}${error.params && "allowedValues" in error.params ? ` (${(error.params.allowedValues as unknown[]).join(", ")})` : ""}`);
    throw toolInvalid(`${options.where}: the schema of parameter \`${name}\` is not valid JSON Schema: ${[...new Set(problems)].slice(0, 3).join("; ")}`, {
      hint: 'Types are string, number, integer, boolean, array, object and null, e.g. {type: "string"}.',
      file: options.file,
    });
  }
}
