import type { ParamType } from "./ProxyDefinition.js";

/** The names a definition may write for a parameter type: JSON Schema's, or Python's as in the seed. */
export const PARAM_TYPE_NAMES = ["string", "integer", "number", "boolean", "array", "object", "str", "int", "float", "bool", "list", "dict"] as const;

/** A type name as written in a definition. */
export type ParamTypeName = (typeof PARAM_TYPE_NAMES)[number];

const FROM_PYTHON: Record<string, ParamType> = { str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object" };
const TO_PYTHON: Record<ParamType, string> = { string: "str", integer: "int", number: "float", boolean: "bool", array: "list", object: "dict" };

/** The JSON Schema name of a type written either way; undefined when it is neither. */
export function toParamType(name: unknown): ParamType | undefined {
  if (typeof name !== "string") return undefined;
  if (name in TO_PYTHON) return name as ParamType;
  return Object.hasOwn(FROM_PYTHON, name) ? FROM_PYTHON[name] : undefined;
}

/** How the documentation shows a type: the Python name the agent's code will use (`str`, `int`, …). */
export function pythonTypeName(type: ParamType): string {
  return TO_PYTHON[type];
}
