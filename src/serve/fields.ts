import { isPlainObject } from "../util/isPlainObject.js";
import { badRequest } from "./HttpError.js";

/** The kinds of value a request field may hold. */
export type FieldKind = "string" | "number" | "integer" | "boolean" | "array" | "object" | "null" | "any";

/**
 * Check a request object's fields: every key known (an unknown one is a 400 naming it), each of an allowed kind (a
 * wrongly typed one is a 400 naming it and the kinds it may be). `where` prefixes the names (`tools[0].function`).
 */
export function checkFields(value: unknown, known: Readonly<Record<string, readonly FieldKind[]>>, where: string): Record<string, unknown> {
  if (!isPlainObject(value)) throw badRequest(`${where === "" ? "the body" : `\`${where}\``} must be a JSON object (got ${kindOf(value)})`, where === "" ? null : where);
  for (const [key, field] of Object.entries(value)) {
    const name = where === "" ? key : `${where}.${key}`;
    const kinds = Object.hasOwn(known, key) ? known[key] : undefined;
    if (!kinds) throw badRequest(`unknown field \`${name}\`; known: ${Object.keys(known).join(", ")}`, name, "unknown_parameter");
    if (!kinds.some((kind) => isKind(field, kind))) throw badRequest(`\`${name}\` must be ${kinds.map(article).join(" or ")} (got ${kindOf(field)})`, name, "invalid_type");
  }
  return value;
}

/** A required field's presence. */
export function required(value: Record<string, unknown>, key: string, where: string): void {
  if (value[key] === undefined) throw badRequest(`\`${where === "" ? key : `${where}.${key}`}\` is required`, where === "" ? key : `${where}.${key}`, "missing_required_parameter");
}

function isKind(value: unknown, kind: FieldKind): boolean {
  switch (kind) {
    case "any":
      return true;
    case "null":
      return value === null;
    case "array":
      return Array.isArray(value);
    case "object":
      return isPlainObject(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    default:
      return typeof value === kind;
  }
}

function article(kind: FieldKind): string {
  return kind === "null" ? "null" : kind === "array" || kind === "object" || kind === "integer" ? `an ${kind === "integer" ? "integer" : kind}` : `a ${kind}`;
}

/** What a value is, in a message: `a string`, `an array`, `null`. */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `${typeof value === "undefined" ? "nothing" : `a ${typeof value}`}`;
}
