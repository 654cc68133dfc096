import { ConfigError } from "../errors.js";

type Schema = Record<string, unknown>;

/** Keywords Gemini's Schema (an OpenAPI 3.0 subset) takes as they are. */
const KEPT = ["description", "title", "nullable", "minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties", "pattern", "default", "example", "propertyOrdering"];
/** Annotations with no meaning for the model's output, dropped. */
const DROPPED = ["$schema", "$id", "$comment", "examples", "readOnly", "writeOnly", "deprecated", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems", "contentMediaType", "contentEncoding"];
const TYPES = new Set(["string", "number", "integer", "boolean", "array", "object", "null"]);
/** The formats Gemini knows; another format is a hint it would refuse, so it is dropped. */
const FORMATS: Record<string, string[]> = { string: ["enum", "date-time"], integer: ["int32", "int64"], number: ["float", "double"] };

/**
 * A tool's JSON Schema as the subset Gemini's function declarations accept: types in upper case, `["x", "null"]`
 * as `nullable`, `const` as a one-value `enum`, `oneOf` as `anyOf`, local `$ref`s inlined, annotations dropped.
 * A construct with no equivalent (`allOf`, `not`, `if`, a map's `additionalProperties`, a recursive `$ref`,
 * `patternProperties`, a non-string `enum`, a type union) is a `ConfigError` that names the tool and the place in
 * its schema: sending it anyway would get a 400 from Gemini, or a model that ignores the constraint.
 */
export function toGeminiSchema(schema: Schema, toolName: string): Schema {
  const root = schema;
  const convert = (node: unknown, where: string, refs: string[]): Schema => {
    const fail = (what: string, hint: string): never => {
      throw new ConfigError("config_gemini_schema", `tool \`${toolName}\`: Gemini cannot take ${what} at ${where} of its parameters schema`, { hint });
    };
    if (node === true || (typeof node === "object" && node !== null && Object.keys(node).length === 0)) return {};
    if (typeof node !== "object" || node === null || Array.isArray(node)) return fail(`\`${JSON.stringify(node)}\``, "give a JSON Schema object");
    const input = node as Schema;
    if (typeof input["$ref"] === "string") {
      const ref = input["$ref"];
      if (refs.includes(ref)) fail(`the recursive \`$ref\` ${ref}`, "Gemini schemas cannot refer to themselves; flatten the structure to a fixed depth");
      return convert(resolveRef(root, ref, () => fail(`the \`$ref\` ${ref}`, "only local references (#/$defs/… or #/definitions/…) can be inlined")), where, [...refs, ref]);
    }
    const out: Schema = {};
    for (const [key, value] of Object.entries(input)) {
      if (KEPT.includes(key)) out[key] = value;
      else if (DROPPED.includes(key) || key === "$defs" || key === "definitions" || key === "type" || key === "format") continue;
      else if (key === "properties") {
        const properties: Schema = {};
        for (const [name, child] of Object.entries((value ?? {}) as Schema)) properties[name] = convert(child, `${where}.properties.${name}`, refs);
        out["properties"] = properties;
      } else if (key === "required") out["required"] = value;
      else if (key === "items") {
        if (Array.isArray(value)) fail("a tuple `items` list", "use one schema for all items");
        out["items"] = convert(value, `${where}.items`, refs);
      } else if (key === "anyOf" || key === "oneOf") {
        if (!Array.isArray(value)) fail(`a non-list \`${key}\``, `give \`${key}\` a list of schemas`);
        const options = (value as unknown[]).filter((option) => !(typeof option === "object" && option !== null && (option as Schema)["type"] === "null"));
        if (options.length < (value as unknown[]).length) out["nullable"] = true;
        if (options.length === 1) Object.assign(out, convert(options[0], `${where}.${key}[0]`, refs));
        else out["anyOf"] = options.map((option, index) => convert(option, `${where}.${key}[${index}]`, refs));
      } else if (key === "enum" || key === "const") {
        const values = key === "enum" ? (value as unknown[]) : [value];
        if (!Array.isArray(values) || values.some((item) => typeof item !== "string")) fail(`a non-string \`${key}\` (${JSON.stringify(value)})`, "Gemini enums hold strings only; use strings, or describe the allowed values in `description`");
        out["enum"] = values;
        out["type"] ??= "STRING";
      } else if (key === "additionalProperties") {
        if (value === false || value === true) continue;
        fail("`additionalProperties` with a schema (a map)", "give the keys as `properties`, or take the map as a JSON string");
      } else fail(`\`${key}\``, unsupportedHint(key));
    }
    const type = input["type"];
    if (type !== undefined) {
      const types = Array.isArray(type) ? type : [type];
      if (types.some((item) => typeof item !== "string" || !TYPES.has(item))) fail(`the type ${JSON.stringify(type)}`, "use string, number, integer, boolean, array or object");
      const real = (types as string[]).filter((item) => item !== "null");
      if (real.length > 1) fail(`the type union ${JSON.stringify(type)}`, "use one type (and `null` for an optional value), or `anyOf`");
      if (real.length < types.length) out["nullable"] = true;
      if (real.length === 1) out["type"] = real[0]!.toUpperCase();
      const format = input["format"];
      if (typeof format === "string" && real.length === 1 && FORMATS[real[0]!]?.includes(format)) out["format"] = format;
    }
    return out;
  };
  return convert(schema, "the root", []);
}

function unsupportedHint(key: string): string {
  if (key === "allOf") return "merge the schemas of `allOf` into one object";
  if (key === "not" || key === "if" || key === "then" || key === "else") return `Gemini has no conditional schemas; describe the rule in \`description\` and check it in the tool`;
  if (key === "patternProperties" || key === "propertyNames" || key === "dependentRequired" || key === "dependentSchemas") return "name the keys as `properties`";
  return "remove it, or describe the rule in `description` and check it in the tool";
}

function resolveRef(root: Schema, ref: string, fail: () => never): unknown {
  if (!ref.startsWith("#/")) return fail();
  let node: unknown = root;
  for (const part of ref.slice(2).split("/")) {
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    if (typeof node !== "object" || node === null || !(key in node)) return fail();
    node = (node as Schema)[key];
  }
  return node;
}
