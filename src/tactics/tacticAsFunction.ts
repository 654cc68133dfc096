import { checkParameterSchemas } from "../tools/checkParameterSchemas.js";
import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { ConfigError } from "../errors.js";
import { compileWithCache } from "../util/sharedAjv.js";
import { FunctionTool, type ToolContext } from "../tools/FunctionTool.js";
import { isPlainObject, type JsonSchema } from "../tools/JsonSchema.js";
import { normalizeParameters } from "../tools/normalizeParameters.js";

/** What `tacticAsFunction` needs: the tool's name and description, the tactic's input schema, and how to run it. */
export interface TacticAsFunctionOptions {
  /** The tool name the model sees (usually the tactic's name). */
  name: string;
  /** What the tactic does; the model reads it to decide when to call it. */
  description: string;
  /** JSON Schema of the tactic's input (the tactic file's `input:`). Absent: any text. */
  inputSchema?: JsonSchema | undefined;
  /**
   * `task` (default): one required `task` string parameter, passed to the tactic (decoded from JSON when the
   * input schema is not a string). `kwargs`: an object input schema's fields become the parameters and the
   * tactic receives the object; an input without fields keeps the single `task` parameter (seed 000, Step 8).
   */
  parameterMode?: "task" | "kwargs";
  /** Run the tactic on a validated input; what it returns is the tool's result. Throw to fail the call. */
  call: (input: unknown, context: ToolContext) => Promise<unknown>;
}

const TASK_DESCRIPTION = "The task for the tactic";


/**
 * A tactic as a tool (seed 000, Step 8): a FunctionTool whose arguments are checked against the tactic's input
 * schema before `call` runs. Invalid input is an error the model reads back as `Error: Invalid input for <name>:
 * …`, so it can retry; the tactic never sees it. This does not depend on the run loop: `call` does the running.
 */
export function tacticAsFunction(options: TacticAsFunctionOptions): FunctionTool {
  const { name, description, call } = options;
  const schema = options.inputSchema === undefined ? undefined : withoutDialect(options.inputSchema, name);
  const validate = schema === undefined ? undefined : compile(schema, name);
  const fail = (errors: ErrorObject[] | null | undefined, subject: string): never => {
    throw new Error(`Invalid input for ${name}: ${describeErrors(errors ?? [], subject)}`);
  };

  if (options.parameterMode === "kwargs" && schema !== undefined && isObjectSchema(schema)) {
    const parameters = normalizeParameters(schema, { where: `tactic \`${name}\`` });
    checkParameterSchemas(parameters.properties, { where: `tactic \`${name}\`` });
    return new FunctionTool({
      name,
      description,
      ...parameters,
      run: async (args, context) => {
        // FunctionTool checked each parameter; the whole schema may say more (patterns of keys, dependencies).
        const input = structuredClone(args);
        if (!validate!(input)) fail(validate!.errors, "input");
        return call(input, context);
      },
    });
  }

  const takesText = schema === undefined || schema.type === "string";
  return new FunctionTool({
    name,
    description,
    properties: { task: { type: "string", description: takesText ? TASK_DESCRIPTION : `${TASK_DESCRIPTION}, as JSON matching this schema: ${JSON.stringify(schema)}` } },
    required: ["task"],
    run: async (args, context) => {
      const task = args.task as string;
      if (!validate) return call(task, context);
      if (validate(task)) return call(task, context);
      // A non-string input arrives as JSON text: the model can only send the task as a string.
      const decoded = decodeJson(task);
      if (decoded === undefined) fail(validate.errors, "task");
      const input = decoded!.value;
      if (!validate(input)) fail(validate.errors, "task");
      return call(input, context);
    },
  });
}

/** The root `$schema` names a dialect this Ajv may not know (draft-07); the keywords tools use mean the same. */
function withoutDialect(schema: JsonSchema, name: string): JsonSchema {
  if (!isPlainObject(schema)) throw new ConfigError("tactic_input_invalid", `tactic \`${name}\`: the input schema must be a JSON Schema object`, { hint: "e.g. input: {type: string}" });
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

function compile(schema: JsonSchema, name: string): ValidateFunction {
  try {
    // From the validator cache when this schema was compiled before (`lllm serve` and `lllm mcp serve` make every
    // tactic of a package a tool at start-up: compiling loaded ajv's compiler, some 90 files, at each start).
    return compileWithCache(schema);
  } catch (error) {
    throw new ConfigError("tactic_input_invalid", `tactic \`${name}\`: the input schema is not a valid JSON Schema: ${error instanceof Error ? error.message : String(error)}`, {
      hint: "Fix the tactic's `input:` (see https://json-schema.org/understanding-json-schema).",
      cause: error,
    });
  }
}

function isObjectSchema(schema: JsonSchema): boolean {
  return schema.type === "object" || (schema.type === undefined && isPlainObject(schema.properties));
}

function decodeJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** `task must be integer; 'days' must be >= 1`: one clause per problem, paths written like arguments. */
function describeErrors(errors: ErrorObject[], subject: string): string {
  const clauses = errors.map((error) => {
    const at = error.instancePath === "" ? subject : `'${error.instancePath.slice(1).replaceAll("/", ".")}'`;
    const extra = error.keyword === "additionalProperties" ? ` '${String((error.params as { additionalProperty?: unknown }).additionalProperty)}'` : "";
    return `${at} ${error.message ?? "is not valid"}${extra}`;
  });
  return [...new Set(clauses)].join("; ") || `${subject} is not valid`;
}
