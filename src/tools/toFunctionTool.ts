import { FunctionTool, TOOL_BRAND, type FunctionToolOptions } from "./FunctionTool.js";
import { isPlainObject } from "./JsonSchema.js";
import { tool, type ToolSpec } from "./tool.js";

/**
 * The FunctionTool a value stands for, or `undefined` when it is not a tool (modules export helpers too):
 * - a FunctionTool of this copy of the module, as it is;
 * - a FunctionTool of another copy (a tool file loaded through a transpiler gets its own copy, so `instanceof`
 *   fails): recognised by the `Symbol.for("lllm.tool")` brand and rebuilt from its fields;
 * - a plain object with a `name` and a `run` or a `description`, via `tool()` (which checks every field).
 * A value that is recognisably meant as a tool but is invalid throws a `tool_invalid` ConfigError.
 */
export function toFunctionTool(value: unknown): FunctionTool | undefined {
  if (value instanceof FunctionTool) return value;
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return undefined;
  const record = value as Record<string | symbol, unknown>;
  if (record[TOOL_BRAND] === true) return new FunctionTool(foreignFields(record));
  // Meant as a tool: a name with a run or a description, whatever their types. tool() then says what is wrong
  // with it (`{name: 5, run: 7}`) instead of it being skipped as a helper without a word.
  if (isPlainObject(value) && "name" in value && ("run" in value || "description" in value)) return tool(value as unknown as ToolSpec);
  return undefined;
}

/** The fields of a FunctionTool from another copy of this module; the constructor checks them. */
function foreignFields(record: Record<string | symbol, unknown>): FunctionToolOptions {
  const fields: Record<string, unknown> = {};
  for (const key of ["name", "description", "properties", "required", "strict", "defaults", "run", "processor", "source", "sideEffects", "approval", "idempotent", "replaysInside", "timeout", "title", "annotations", "inputSchema", "outputSchema"]) {
    if (record[key] !== undefined) fields[key] = record[key];
  }
  return fields as unknown as FunctionToolOptions;
}
