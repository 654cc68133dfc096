import type { FunctionTool, JsonSchema } from "../tools/index.js";
import { isPlainObject } from "../tools/JsonSchema.js";
import { pythonRepr } from "../util/pythonRepr.js";
import { isPythonIdentifier, pythonName } from "./pythonNames.js";

/** The parameters in the order a program passes them positionally: required first, then optional (schema order). */
export function parameterOrder(tool: FunctionTool): string[] {
  const names = Object.keys(tool.properties);
  const required = names.filter((name) => tool.required.includes(name));
  return [...required, ...names.filter((name) => !tool.required.includes(name))];
}

/**
 * A tool as the program sees it, a Python function with a docstring, from its JSON Schema:
 *
 * ```python
 * def get_weather(city: str, unit: str = 'celsius'):
 *     """Get the current weather for a city
 *
 *     city: The city name, e.g. 'Paris'
 *     unit: Temperature unit (default: 'celsius')
 *     """
 * ```
 *
 * Required parameters come first; an optional one shows its default, or `= None`. A tool whose name is a Python
 * builtin is shown as `tools.<name>`, the only way to call it.
 */
export function pythonSignature(tool: FunctionTool): string {
  const { python, bare } = pythonName(tool.name);
  const parameters = parameterOrder(tool).filter(isPythonIdentifier);
  const rendered = parameters.map((name) => {
    const annotation = pythonType(tool.properties[name] ?? {});
    if (tool.required.includes(name)) return `${name}: ${annotation}`;
    const fallback = Object.hasOwn(tool.defaults, name) ? pythonRepr(tool.defaults[name]) : "None";
    return `${name}: ${annotation} = ${fallback}`;
  });
  const doc = (tool.description.trim() || "(no description)").split("\n");
  const documented = parameters.filter((name) => typeof tool.properties[name]?.description === "string");
  if (documented.length > 0) doc.push("", ...documented.map((name) => `${name}: ${String(tool.properties[name]!.description)}`));
  const body = doc.map((line) => line.replaceAll('"""', "'''"));
  const lines = [`def ${bare ? python : `tools.${python}`}(${rendered.join(", ")}):`];
  if (body.length === 1) lines.push(`    """${body[0]}"""`);
  else lines.push(`    """${body[0]}`, ...body.slice(1).map((line) => (line === "" ? "" : `    ${line}`)), '    """');
  return lines.join("\n");
}

/** A Python type annotation for a JSON Schema: `str`, `int`, `list[str]`, `dict`, `str | None`, `Literal['a', 'b']`. */
export function pythonType(schema: JsonSchema): string {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return `Literal[${schema.enum.map(pythonRepr).join(", ")}]`;
  const union = (Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined) as unknown[] | undefined;
  if (union) return join(union.map((part) => (isPlainObject(part) ? pythonType(part) : "Any")));
  if (Array.isArray(schema.type)) return join(schema.type.map((type) => pythonType({ ...schema, type })));
  switch (schema.type) {
    case "string":
      return "str";
    case "integer":
      return "int";
    case "number":
      return "float";
    case "boolean":
      return "bool";
    case "null":
      return "None";
    case "array":
      return isPlainObject(schema.items) ? `list[${pythonType(schema.items)}]` : "list";
    case "object":
      return "dict";
    default:
      return "Any";
  }
}

function join(types: string[]): string {
  return [...new Set(types)].join(" | ");
}
