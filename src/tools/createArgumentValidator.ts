import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { didYouMean } from "../util/closest.js";
import { compileWithCache } from "../util/sharedAjv.js";
import { isPlainObject, kindOf, type JsonSchema } from "./JsonSchema.js";
import { toolInvalid } from "./toolInvalid.js";

/** The outcome of checking a call's arguments: the arguments `run` receives (defaults filled in), or why not. */
export type ArgumentCheck = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/**
 * Compile a checker for a tool's arguments. The schema is the published one with the defaults put back, so that
 * defaults reach `run`, or (with `schema`) a whole schema as its author wrote it; the caller's arguments object is
 * never modified. Messages are written for the model: they name the argument, what was expected, and for an
 * unknown argument the allowed names.
 */
export function createArgumentValidator(
  options: { toolName: string; file?: string | undefined } & (
    | { properties: Record<string, JsonSchema>; required: readonly string[]; defaults: Record<string, unknown>; schema?: never }
    | { schema: JsonSchema; properties?: never; required?: never; defaults?: never }
  ),
): (args: unknown) => ArgumentCheck {
  let schema: JsonSchema;
  if (options.schema !== undefined) {
    // The dialect is 2020-12 for this Ajv whatever the schema names; the keywords tools use mean the same.
    const { $schema: _dialect, ...rest } = options.schema;
    schema = rest;
  } else {
    const properties: Record<string, JsonSchema> = {};
    for (const [name, item] of Object.entries(options.properties)) {
      properties[name] = Object.hasOwn(options.defaults, name) ? { ...item, default: options.defaults[name] } : item;
    }
    schema = { type: "object", properties, required: [...options.required], additionalProperties: false };
  }
  let validate: ValidateFunction;
  try {
    validate = compileWithCache(schema);
  } catch (error) {
    throw toolInvalid(`tool \`${options.toolName}\`: its parameters are not a valid JSON Schema: ${error instanceof Error ? error.message : String(error)}`, {
      hint: "Fix the parameter schemas (see https://json-schema.org/understanding-json-schema).",
      file: options.file,
      cause: error,
    });
  }
  const allowed = Object.keys(isPlainObject(schema.properties) ? schema.properties : {});

  return (args) => {
    // Models often send nothing (or null) for a tool without parameters.
    const given = args === undefined || args === null ? {} : args;
    if (!isPlainObject(given)) return { ok: false, message: `arguments must be an object of named arguments, got ${kindOf(given)}` };
    let value: Record<string, unknown>;
    try {
      // A copy, because useDefaults writes into the data and the call must keep what the model sent.
      value = structuredClone(given);
    } catch {
      return { ok: false, message: "arguments must be plain JSON values" };
    }
    if (validate(value)) return { ok: true, value };
    return { ok: false, message: describeErrors(validate.errors ?? [], allowed) };
  };
}

/** One sentence per problem, joined with `; `, without the noise of anyOf's per-branch errors. */
function describeErrors(errors: ErrorObject[], allowed: string[]): string {
  const anyOfPaths = errors.filter((error) => error.keyword === "anyOf" || error.keyword === "oneOf").map((error) => error.schemaPath);
  const messages: string[] = [];
  for (const error of errors) {
    // A failed branch of an anyOf is reported once, by the anyOf error itself.
    if (anyOfPaths.some((path) => error.schemaPath.startsWith(`${path}/`))) continue;
    const message = describeError(error, allowed);
    if (!messages.includes(message)) messages.push(message);
  }
  return messages.join("; ");
}

function describeError(error: ErrorObject, allowed: string[]): string {
  const at = argumentPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required": {
      const missing = String(params.missingProperty);
      const schema = propertySchema(error.parentSchema, missing);
      const expected = schema ? ` (${describeSchema(schema)})` : "";
      return at === undefined ? `missing required argument '${missing}'${expected}` : `'${at}' is missing required field '${missing}'${expected}`;
    }
    case "additionalProperties": {
      const unknown = String(params.additionalProperty);
      if (at === undefined) {
        const suggestion = didYouMean(unknown, allowed);
        const choices = allowed.length > 0 ? `allowed arguments: ${allowed.map((name) => `'${name}'`).join(", ")}` : "this tool takes no arguments";
        return `unknown argument '${unknown}'${suggestion ? ` (${suggestion.replaceAll("`", "'")})` : ""}; ${choices}`;
      }
      const fields = Object.keys(propertiesOf(error.parentSchema));
      return `'${at}' has unknown field '${unknown}'${fields.length > 0 ? `; allowed fields: ${fields.map((name) => `'${name}'`).join(", ")}` : ""}`;
    }
    case "type":
    case "enum":
    case "const":
    case "anyOf":
    case "oneOf":
      return `${subject(at)} must be ${describeSchema(error.parentSchema)}, got ${describeValue(error.data)}`;
    default:
      return `${subject(at)} ${error.message ?? "is not valid"}`;
  }
}

/** `/points/0/x` → `points[0].x`; the top level (the arguments object itself) → undefined. */
function argumentPath(instancePath: string): string | undefined {
  if (instancePath === "") return undefined;
  let path = "";
  for (const segment of instancePath.slice(1).split("/")) {
    const name = segment.replaceAll("~1", "/").replaceAll("~0", "~");
    path += /^\d+$/.test(name) ? `[${name}]` : path === "" ? name : `.${name}`;
  }
  return path;
}

function subject(at: string | undefined): string {
  return at === undefined ? "arguments" : `argument '${at}'`;
}

function propertiesOf(schema: unknown): Record<string, unknown> {
  return isPlainObject(schema) && isPlainObject(schema.properties) ? schema.properties : {};
}

function propertySchema(schema: unknown, name: string): unknown {
  const properties = propertiesOf(schema);
  return Object.hasOwn(properties, name) ? properties[name] : undefined;
}

/** What a schema expects, in a few words: `string`, `one of "red", "blue"`, `integer or null`, `array of number`. */
function describeSchema(schema: unknown): string {
  if (!isPlainObject(schema)) return "a valid value";
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((value) => JSON.stringify(value)).join(", ")}`;
  if ("const" in schema) return JSON.stringify(schema.const);
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (branches) return branches.map(describeSchema).join(" or ");
  const types = Array.isArray(schema.type) ? schema.type.map(String) : typeof schema.type === "string" ? [schema.type] : [];
  if (types.length === 1 && types[0] === "array" && isPlainObject(schema.items)) return `array of ${describeSchema(schema.items)}`;
  if (types.length === 1 && types[0] === "object" && typeof schema.title === "string") return `object (${schema.title})`;
  return types.length > 0 ? types.join(" or ") : "a valid value";
}

/** A value as JSON with its kind, shortened: `string "0"`, `array [1,2]`. */
function describeValue(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  const shown = json.length > 60 ? `${json.slice(0, 57)}...` : json;
  return value === null ? "null" : `${kindOf(value)} ${shown}`;
}
