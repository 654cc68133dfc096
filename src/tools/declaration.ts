import { checkParameterSchemas } from "./checkParameterSchemas.js";
import { FunctionTool, type ToolAnnotations } from "./FunctionTool.js";
import { toolMetadata } from "./tool.js";
import { isPlainObject, kindOf, type JsonSchema } from "./JsonSchema.js";
import { normalizeParameters, type ParametersInput } from "./normalizeParameters.js";
import { checkToolName } from "./toolName.js";
import { toolInvalid } from "./toolInvalid.js";

/**
 * A declaration: the schema without an implementation, bound later by exact name (seed 000, Step 7). Either
 * `parameters` (any form `tool()` accepts) or LLLM's `properties` + `required`.
 */
export type DeclarationSpec = {
  name: string;
  description: string;
  strict?: boolean;
  /** As in `tool()`: a title, behaviour hints and the schema of structured results, owned by the declaration. */
  title?: string;
  annotations?: ToolAnnotations;
  outputSchema?: JsonSchema;
} & ({ parameters?: ParametersInput; properties?: never; required?: never } | { properties: Record<string, JsonSchema>; required?: string[]; parameters?: never });

/** Build a declaration; throws a `tool_invalid` ConfigError saying what to fix. */
export function declaration(spec: DeclarationSpec): FunctionTool {
  if (!isPlainObject(spec)) {
    throw toolInvalid(`declaration() needs a spec object, got ${kindOf(spec)}`, { hint: 'Write declaration({ name: "web_search", description: "…", parameters: {…} }).' });
  }
  const name = checkToolName(spec.name);
  const where = `tool \`${name}\``;
  if (spec.parameters !== undefined && spec.properties !== undefined) {
    throw toolInvalid(`${where}: give either \`parameters\` or \`properties\` (with \`required\`), not both`);
  }
  const parameters = spec.properties === undefined ? spec.parameters : { type: "object", properties: spec.properties, ...(spec.required === undefined ? {} : { required: spec.required }) };
  const { properties, required, defaults, inputSchema } = normalizeParameters(parameters, { where });
  checkParameterSchemas(properties, { where });
  const metadata = toolMetadata({ title: spec.title, annotations: spec.annotations, outputSchema: spec.outputSchema }, where);
  return new FunctionTool({ name, description: spec.description, properties, required, defaults, inputSchema, ...metadata, ...(spec.strict === undefined ? {} : { strict: spec.strict }) });
}
