import { didYouMean } from "../util/closest.js";
import { pythonRepr } from "../util/pythonRepr.js";
import { collectDefinitions, inlineSchema } from "./inlineSchema.js";
import { isPlainObject, kindOf, type JsonSchema } from "./JsonSchema.js";
import { toolInvalid } from "./toolInvalid.js";
import { isZodSchema, zodToJsonSchema } from "./zodToJsonSchema.js";

/**
 * What a tool's `parameters` may be:
 * - a properties map: `{city: {type: "string"}, unit: {type: "string", default: "celsius"}}`;
 * - a whole object schema: `{type: "object", properties, required?, $defs?}`;
 * - a zod 4 object schema: `z.object({city: z.string()})`.
 */
export type ParametersInput = Record<string, JsonSchema> | JsonSchema | { readonly _zod: unknown };

/** A tool's parameters after the rules of seed 000, Step 1. */
export interface NormalizedParameters {
  /** Each parameter's schema as the model sees it: refs inlined, defaults moved into the description. */
  properties: Record<string, JsonSchema>;
  /** Parameters the model must send. */
  required: string[];
  /** The defaults taken out of `properties`; validation puts them back so that `run` receives them. */
  defaults: Record<string, unknown>;
  /**
   * The schema as the author wrote it, for readers that take JSON Schema as it is (MCP clients): a whole schema or
   * a zod schema's JSON Schema unchanged (`$schema`, `$defs`, `default`, no `required` added); a properties map
   * as an object schema whose `required` lists the parameters without a default (LLLM's meaning of the map).
   */
  inputSchema: JsonSchema;
}

/** Where the parameters come from, for error messages: `where` names the tool ("tool `get_weather`"). */
export interface NormalizeOptions {
  where: string;
  file?: string | undefined;
  /**
   * A parameter whose schema says nothing of its type becomes a string (seed 000, Step 1: "unannotated parameters
   * become strings"). Default true; an MCP server's schema is its own contract, where `{}` means any value.
   */
  untypedAsString?: boolean | undefined;
}

/**
 * Turn any accepted form of parameters into the schema the model sees (seed 000, Step 1):
 * - parameters without a `default` are required, unless a whole object schema lists `required` itself (zod
 *   always does: its optional fields are not required);
 * - a default is removed from the schema and noted at the end of the description as ` (default: 'celsius')`;
 * - every `$ref` is inlined (recursive definitions once), and `type: [x, "null"]` becomes an `anyOf`;
 * - a parameter with no type (no `type`, `enum`, `const`, `anyOf`, ...) becomes a string, like an unannotated
 *   Python parameter; a zod schema always states its types (`z.any()` is a choice, kept as is).
 */
export function normalizeParameters(parameters: unknown, options: NormalizeOptions): NormalizedParameters {
  const { where, file } = options;
  if (parameters === undefined || parameters === null) return { properties: {}, required: [], defaults: {}, inputSchema: { type: "object", properties: {}, additionalProperties: false } };

  let root: JsonSchema;
  let explicitRequired: unknown;
  let shorthand = false;
  const fromZod = isZodSchema(parameters);
  if (fromZod) {
    root = zodToJsonSchema(parameters, where, file);
    if (root.type !== "object") {
      throw toolInvalid(`${where}: zod parameters must be an object schema, got one of type ${JSON.stringify(root.type) ?? "unknown"}`, {
        hint: "Wrap the arguments in z.object({...}): each field becomes one parameter.",
        file,
      });
    }
    explicitRequired = root.required ?? [];
  } else if (!isPlainObject(parameters)) {
    throw toolInvalid(`${where}: \`parameters\` must be an object, got ${kindOf(parameters)}`, {
      hint: 'Give a map of parameter schemas, e.g. {city: {type: "string"}}, a JSON Schema {type: "object", properties: …}, or a zod z.object(…).',
      file,
    });
  } else if (typeof parameters.type === "string") {
    // A whole schema: its `type` is a string, whereas in a properties map every value is a schema object.
    if (parameters.type !== "object") {
      throw toolInvalid(`${where}: the parameters schema must have \`type: object\`, got \`type: ${parameters.type}\``, {
        hint: "Tool arguments are always named: describe each one under `properties`.",
        file,
      });
    }
    root = parameters;
    if (root.properties !== undefined && !isPlainObject(root.properties)) {
      throw toolInvalid(`${where}: \`properties\` must map parameter names to schemas, got ${kindOf(root.properties)}`, { file });
    }
    explicitRequired = root.required;
  } else {
    root = { properties: parameters };
    shorthand = true;
  }

  const definitions = collectDefinitions(root);
  const properties: Record<string, JsonSchema> = {};
  const defaults: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries((root.properties ?? {}) as Record<string, unknown>)) {
    if (!isPlainObject(schema)) {
      throw toolInvalid(`${where}: parameter \`${name}\` must be a JSON Schema object, got ${kindOf(schema)}`, {
        hint: `Describe it like {type: "string", description: "…"}.`,
        file,
      });
    }
    let inlined = inlineSchema(schema, { definitions, where: `${where}, parameter \`${name}\``, file }) as JsonSchema;
    if (options.untypedAsString !== false && !fromZod && isUntyped(inlined)) inlined = { type: "string", ...inlined };
    if ("default" in inlined) {
      defaults[name] = inlined.default;
      properties[name] = noteDefault(inlined);
    } else {
      properties[name] = inlined;
    }
  }

  const required = explicitRequired === undefined ? Object.keys(properties).filter((name) => !(name in defaults)) : checkRequired(explicitRequired, properties, options);
  const inputSchema = shorthand ? { type: "object", properties: writtenProperties(root.properties as Record<string, JsonSchema>, options), required, additionalProperties: false } : root;
  return { properties, required, defaults, inputSchema };
}

/** A properties map as written, an untyped parameter made a string as validation makes it (seed 000, Step 1). */
function writtenProperties(properties: Record<string, JsonSchema>, options: NormalizeOptions): Record<string, JsonSchema> {
  if (options.untypedAsString === false) return properties;
  return Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, isUntyped(schema) ? { type: "string", ...schema } : schema]));
}

/** Keywords that say what values a schema takes: a schema with none of them gets `type: string`. */
const TYPE_KEYWORDS = ["type", "enum", "const", "anyOf", "oneOf", "allOf", "not", "$ref", "properties", "items"];

function isUntyped(schema: JsonSchema): boolean {
  return TYPE_KEYWORDS.every((keyword) => !(keyword in schema));
}

/** Remove `default` and append ` (default: <python repr>)` to the description (created when absent). */
function noteDefault(schema: JsonSchema): JsonSchema {
  const note = `(default: ${pythonRepr(schema.default)})`;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "default") continue;
    out[key] = key === "description" && typeof value === "string" && value !== "" ? `${value} ${note}` : value;
  }
  if (typeof out.description !== "string" || out.description === "") out.description = note;
  return out;
}

/** `required` must list parameters that exist. */
export function checkRequired(required: unknown, properties: Record<string, unknown>, options: NormalizeOptions): string[] {
  const names = Object.keys(properties);
  if (!Array.isArray(required) || required.some((entry) => typeof entry !== "string")) {
    throw toolInvalid(`${options.where}: \`required\` must be a list of parameter names, got ${JSON.stringify(required)}`, {
      hint: names.length > 0 ? `For example required: [${names.map((name) => JSON.stringify(name)).join(", ")}].` : "List the names of the parameters the model must always send.",
      file: options.file,
    });
  }
  for (const entry of required as string[]) {
    if (!Object.hasOwn(properties, entry)) {
      const suggestion = didYouMean(entry, names);
      throw toolInvalid(`${options.where}: \`required\` lists \`${entry}\`, which is not a parameter${suggestion ? ` (${suggestion})` : ""}`, {
        hint: names.length > 0 ? `The parameters are ${names.map((name) => `\`${name}\``).join(", ")}; add \`${entry}\` to them or remove it from required.` : `This tool has no parameters; add \`${entry}\` to them or remove it from required.`,
        file: options.file,
      });
    }
  }
  return [...(required as string[])];
}
