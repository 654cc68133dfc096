import type { JsonSchema } from "./JsonSchema.js";
import { toolInvalid } from "./toolInvalid.js";

const TYPES = new Set(["string", "number", "integer", "boolean", "array", "object", "null"]);
/** Keywords whose value is one schema, and those whose value maps names to schemas or lists schemas. */
const SUBSCHEMA = ["items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"];
const SUBSCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions"];
const SUBSCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];

/**
 * Check the parameter schemas when a tool is defined, so that a typo such as `type: strin` is reported at load time
 * with the file, not as a provider's 400 in the middle of a run. A structural check of `type` and of where
 * sub-schemas go, not a full meta-schema validation: compiling the meta-schema would cost every start-up ~30 ms.
 */
export function checkParameterSchemas(properties: Record<string, JsonSchema>, options: { where: string; file?: string | undefined }): void {
  for (const [name, schema] of Object.entries(properties)) {
    const problem = findProblem(schema, "");
    if (problem) {
      throw toolInvalid(`${options.where}: the schema of parameter \`${name}\` is not valid JSON Schema: ${problem}`, {
        hint: 'Types are string, number, integer, boolean, array, object and null, e.g. {type: "string"}.',
        file: options.file,
      });
    }
  }
}

function findProblem(schema: unknown, at: string): string | undefined {
  if (typeof schema === "boolean") return undefined;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return `${at || "the schema"} must be an object`;
  const record = schema as Record<string, unknown>;
  const type = record.type;
  if (type !== undefined) {
    const names = Array.isArray(type) ? type : [type];
    const bad = names.find((name) => typeof name !== "string" || !TYPES.has(name));
    if (bad !== undefined) return `${at ? `${at}: ` : ""}\`type: ${String(bad)}\` is not a JSON Schema type`;
  }
  for (const key of SUBSCHEMA) {
    if (record[key] === undefined) continue;
    const found = findProblem(record[key], `${at}/${key}`);
    if (found) return found;
  }
  for (const key of SUBSCHEMA_MAPS) {
    const value = record[key];
    if (value === undefined) continue;
    if (typeof value !== "object" || value === null || Array.isArray(value)) return `${at}/${key} must map names to schemas`;
    for (const [name, child] of Object.entries(value)) {
      const found = findProblem(child, `${at}/${key}/${name}`);
      if (found) return found;
    }
  }
  for (const key of SUBSCHEMA_LISTS) {
    const value = record[key];
    if (value === undefined) continue;
    if (!Array.isArray(value)) return `${at}/${key} must be a list of schemas`;
    for (const [index, child] of value.entries()) {
      const found = findProblem(child, `${at}/${key}/${index}`);
      if (found) return found;
    }
  }
  if (record.enum !== undefined && !Array.isArray(record.enum)) return `${at}/enum must be a list`;
  if (record.required !== undefined && !Array.isArray(record.required)) return `${at}/required must be a list of names`;
  return undefined;
}
