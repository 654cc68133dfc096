import { isPlainObject, type JsonSchema } from "./JsonSchema.js";
import { toolInvalid } from "./toolInvalid.js";

/** Keywords whose value is one sub-schema. */
const SCHEMA_KEYWORDS = new Set(["items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems"]);
/** Keywords whose value is a list of sub-schemas. */
const SCHEMA_LIST_KEYWORDS = new Set(["anyOf", "oneOf", "allOf", "prefixItems", "items"]);
/** Keywords whose value maps names to sub-schemas. */
const SCHEMA_MAP_KEYWORDS = new Set(["properties", "patternProperties", "dependentSchemas"]);

/** Where `$ref`s point: the root schema's `$defs` and `definitions`, by their ref text. */
export type Definitions = Map<string, { name: string; schema: unknown }>;

/** Collect `#/$defs/…` and `#/definitions/…` of a root schema so that refs can be resolved. */
export function collectDefinitions(root: JsonSchema): Definitions {
  const definitions: Definitions = new Map();
  for (const keyword of ["$defs", "definitions"]) {
    const map = root[keyword];
    if (!isPlainObject(map)) continue;
    for (const [name, schema] of Object.entries(map)) {
      definitions.set(`#/${keyword}/${escapePointer(name)}`, { name, schema });
    }
  }
  return definitions;
}

/**
 * One parameter's schema with every `$ref` inlined and `type: [x, "null"]` rewritten as `anyOf`.
 *
 * Providers' strict modes and many models handle neither `$ref` nor type lists well, and LLLM's schemas inline
 * models. A recursive definition is inlined once; a reference back into a definition that is being expanded
 * becomes `{"type": "object", "title": "<its title or name>"}`, which keeps the schema finite.
 */
export function inlineSchema(schema: unknown, options: { definitions: Definitions; where: string; file?: string | undefined }): unknown {
  return walk(schema, [], options);
}

function walk(node: unknown, expanding: string[], options: { definitions: Definitions; where: string; file?: string | undefined }): unknown {
  if (!isPlainObject(node)) return node;
  const ref = node.$ref;
  if (typeof ref === "string") {
    const definition = options.definitions.get(ref) ?? options.definitions.get(safeDecode(ref));
    if (!definition) {
      const known = [...options.definitions.keys()];
      throw toolInvalid(`${options.where}: cannot resolve \`$ref: ${ref}\``, {
        hint: known.length > 0 ? `Refs must point into the schema's own $defs: ${known.join(", ")}.` : "Put the referenced schema under `$defs` in the parameters schema, or write it inline.",
        file: options.file,
      });
    }
    const { $ref: _ref, ...siblings } = node;
    const rest = walk(siblings, expanding, options) as JsonSchema;
    if (expanding.includes(ref)) return { ...backReference(definition), ...rest };
    const expanded = walk(definition.schema, [...expanding, ref], options);
    return { ...(isPlainObject(expanded) ? expanded : {}), ...rest };
  }
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "type" && Array.isArray(value) && !("anyOf" in node)) {
      const types = value as unknown[];
      if (types.length === 1) out.type = types[0];
      else out.anyOf = types.map((type) => ({ type }));
    } else if (SCHEMA_LIST_KEYWORDS.has(key) && Array.isArray(value)) {
      out[key] = value.map((item) => walk(item, expanding, options));
    } else if (SCHEMA_KEYWORDS.has(key)) {
      out[key] = walk(value, expanding, options);
    } else if (SCHEMA_MAP_KEYWORDS.has(key) && isPlainObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, walk(item, expanding, options)]));
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** What a reference back into a definition being expanded becomes. */
function backReference(definition: { name: string; schema: unknown }): JsonSchema {
  const schema = isPlainObject(definition.schema) ? definition.schema : {};
  const type = typeof schema.type === "string" ? schema.type : "object";
  // zod names definitions it had to create `__schema0`; that tells the model nothing, so it is left out.
  const title = typeof schema.title === "string" ? schema.title : /^__schema\d+$/.test(definition.name) ? undefined : definition.name;
  return title === undefined ? { type } : { type, title };
}

function escapePointer(name: string): string {
  return name.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** Refs may percent-encode their pointer (`#/$defs/My%20Model`). */
function safeDecode(ref: string): string {
  try {
    return decodeURIComponent(ref);
  } catch {
    return ref;
  }
}
