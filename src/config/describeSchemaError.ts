import type { ErrorObject } from "ajv";
import { didYouMean } from "../util/closest.js";
import type { ConfigProblem } from "../errors.js";
import { formatKeyPath } from "./formatKeyPath.js";
import { quoteKey } from "./quoteKey.js";
import type { DataPath, SourceLocator } from "./SourceDocument.js";

/** How problems name the place they are about when it is the whole file (the root of the data). */
export interface DescribeOptions {
  /** Name of the data's root, as in "unknown key `x` in package.json#lllm". Default: "the top level". */
  rootName?: string;
}

/**
 * One ajv error as a problem a user can act on: where it is (file:line:col), which key (in dotted form), and what
 * was expected, in words rather than JSON Schema keywords.
 */
export function describeSchemaError(error: ErrorObject, path: DataPath, locator: SourceLocator, options: DescribeOptions = {}): ConfigProblem {
  const where = path.length === 0 ? (options.rootName ?? "the top level") : formatKeyPath(path);
  const inWhere = path.length > 0 || options.rootName ? `in ${where}` : "at the top level";
  const params = error.params as Record<string, unknown>;
  const parentSchema = (error.parentSchema ?? {}) as Record<string, unknown>;
  const located = (message: string, hint?: string): ConfigProblem => ({
    message,
    location: locator.locate(path),
    ...(hint ? { hint } : {}),
  });

  switch (error.keyword) {
    case "additionalProperties": {
      const key = String(params.additionalProperty);
      const allowed = Object.keys((parentSchema.properties as Record<string, unknown> | undefined) ?? {});
      const hint = didYouMean(key, allowed) || (allowed.length > 0 ? `valid keys: ${allowed.join(", ")}` : "");
      return { message: `unknown key ${quoteKey(key)} ${inWhere}`, location: locator.locateKey([...path, key]), ...(hint ? { hint } : {}) };
    }
    case "required":
      return located(`missing required key ${quoteKey(String(params.missingProperty))} ${inWhere}`);
    case "type":
      return located(`${where} must be ${typeWords(params.type)}${got(error.data)}`);
    case "enum": {
      const values = (params.allowedValues as unknown[]).map(String);
      const hint = typeof error.data === "string" ? didYouMean(error.data, values) : "";
      return located(`${where} must be one of: ${values.join(", ")}${got(error.data)}`, hint);
    }
    case "const":
      return located(`${where} must be ${JSON.stringify(params.allowedValue)}${got(error.data)}`);
    case "minimum":
      return located(`${where} must be at least ${String(params.limit)}${got(error.data)}`);
    case "exclusiveMinimum":
      return located(`${where} must be greater than ${String(params.limit)}${got(error.data)}`);
    case "maximum":
      return located(`${where} must be at most ${String(params.limit)}${got(error.data)}`);
    case "exclusiveMaximum":
      return located(`${where} must be less than ${String(params.limit)}${got(error.data)}`);
    case "minLength":
      return located(params.limit === 1 ? `${where} must not be empty` : `${where} must be at least ${String(params.limit)} characters long`);
    case "maxLength":
      return located(`${where} must be at most ${String(params.limit)} characters long${got(error.data)}`);
    case "minItems":
      return located(`${where} must have at least ${String(params.limit)} item${params.limit === 1 ? "" : "s"}`);
    case "maxItems":
      return located(`${where} must have at most ${String(params.limit)} item${params.limit === 1 ? "" : "s"}`);
    case "pattern": {
      const explained = typeof parentSchema.patternErrorMessage === "string" ? parentSchema.patternErrorMessage : `must match the pattern ${String(params.pattern)}`;
      return located(`${where} ${explained}${got(error.data)}`);
    }
    case "format":
      return located(`${where} must be ${formatWords(String(params.format))}${got(error.data)}`);
    default:
      return located(`${where} ${error.message ?? "is not valid"}`);
  }
}

const TYPE_WORDS: Record<string, string> = {
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "true or false",
  array: "a list",
  object: "a mapping",
  null: "null",
};

/** `a string`, `a string or null`, `a string, a number or null`. */
export function typeWords(types: unknown): string {
  const list = (Array.isArray(types) ? types : String(types).split(",")).map((type) => TYPE_WORDS[String(type)] ?? String(type));
  if (list.length <= 1) return list[0] ?? "valid";
  return `${list.slice(0, -1).join(", ")} or ${list[list.length - 1]}`;
}

function formatWords(format: string): string {
  if (format === "date") return "a date written YYYY-MM-DD";
  if (format === "date-time") return "a date and time in ISO 8601 form";
  return `a valid ${format}`;
}

/** ` (got "three")`: the offending value, short, so the user can find it without opening the file. */
export function got(value: unknown): string {
  if (value === undefined) return "";
  if (Array.isArray(value)) return " (got a list)";
  if (value !== null && typeof value === "object") return " (got a mapping)";
  const text = JSON.stringify(value);
  return ` (got ${text.length > 40 ? `${text.slice(0, 37)}…` : text})`;
}
