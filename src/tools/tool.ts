import { checkParameterSchemas } from "./checkParameterSchemas.js";
import { FunctionTool, type ResultProcessor, type ToolAnnotations, type ToolRun, type ToolSource } from "./FunctionTool.js";
import { isPlainObject, kindOf, type JsonSchema } from "./JsonSchema.js";
import type { ToolRunContext } from "./ToolContext.js";
import { isZodSchema, zodToJsonSchema } from "./zodToJsonSchema.js";
import { normalizeParameters, type ParametersInput } from "./normalizeParameters.js";
import { checkToolName } from "./toolName.js";
import { toolInvalid } from "./toolInvalid.js";

/**
 * A tool written in TypeScript: `tool({ name, description, parameters, run })`. `Args` only types `run`'s
 * arguments for the author; the arguments are checked against `parameters` before `run` sees them.
 */
export interface ToolSpec<Args extends object = Record<string, unknown>> {
  /** Letters, digits, `_` and `-`, at most 64 characters. */
  name: string;
  /** What the tool does and when to use it; the model reads it. */
  description: string;
  /** A properties map, a whole object JSON Schema, or a zod object; absent means the tool takes no arguments. */
  parameters?: ParametersInput;
  /**
   * The implementation. It may return a value (text, or data the model reads as JSON), or a rich result made with
   * `toolResult()` (images, audio, resources, data with an `outputSchema`). `context` gives `signal`, `progress`,
   * `log`, `sample` (a model answer) and `elicit` (ask the user); see `ToolRunContext` for what each does where.
   */
  run: (args: Args, context: ToolRunContext) => unknown | Promise<unknown>;
  processor?: ResultProcessor;
  /** Overrides the automatic decision (see `decideStrict`). */
  strict?: boolean;
  sideEffects?: boolean;
  approval?: "required" | "never";
  /**
   * Calling it twice with the same arguments does no more than once: a resumed run (`lllm run --resume`) runs a call
   * cut short by the stop again. Default: true when `sideEffects` is false (or `annotations.readOnlyHint`), else false.
   */
  idempotent?: boolean;
  /**
   * Seconds a call may take. Past it the call fails with an error the model reads (`Error: tool … did not finish
   * within N s`) and `context.signal` is aborted so the tool can stop its work. Default: no limit.
   */
  timeout?: number;
  source?: ToolSource;
  /** A human-readable name, for clients that show tools (MCP's `title`). */
  title?: string;
  /** Behaviour hints for MCP clients: `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`. */
  annotations?: ToolAnnotations;
  /** JSON Schema (or a zod object) of the `structuredContent` of the tool's rich results. */
  outputSchema?: JsonSchema | ZodObjectLike;
}

/**
 * A zod object schema, by shape: zod 4 keeps a schema's parsed type in `_zod.output`. Structural, so that lllm
 * need not import zod (it loads on first use) and a package's own copy of zod 4 fits too.
 */
export interface ZodObjectLike<Output extends object = object> {
  readonly _zod: { readonly output: Output };
}

/**
 * Build a FunctionTool from a spec: the parameters are normalised by the rules of seed 000, Step 1 and strict is
 * decided from them unless the spec says. Throws a `tool_invalid` ConfigError saying what to fix.
 *
 * With zod parameters, `run`'s arguments are typed from the schema: `tool({parameters: z.object({city:
 * z.string()}), run: ({city}) => …})` gives `city: string`. With JSON Schema parameters they are
 * `Record<string, unknown>`, or the type given explicitly: `tool<{city: string}>({…})`.
 */
export function tool<Schema extends ZodObjectLike>(spec: ToolSpec<Schema["_zod"]["output"]> & { parameters: Schema }): FunctionTool;
export function tool<Args extends object = Record<string, unknown>>(spec: ToolSpec<Args>): FunctionTool;
export function tool(spec: ToolSpec<object>): FunctionTool {
  if (!isPlainObject(spec)) {
    throw toolInvalid(`tool() needs a spec object, got ${kindOf(spec)}`, { hint: 'Write tool({ name: "get_weather", description: "…", parameters: {…}, run: (args) => … }).' });
  }
  const file = spec.source?.file;
  const name = checkToolName(spec.name, file);
  const where = `tool \`${name}\``;
  if (typeof spec.run !== "function") {
    throw toolInvalid(`${where}: \`run\` must be a function, got ${kindOf(spec.run)}`, {
      hint: "Give `run: (args, context) => result` (it may be async); for a tool without implementation use declaration().",
      file,
    });
  }
  for (const key of ["strict", "idempotent"] as const) {
    if (spec[key] !== undefined && typeof spec[key] !== "boolean") throw toolInvalid(`${where}: \`${key}\` must be true or false, got ${kindOf(spec[key])}`, { file });
  }
  checkApproval(spec.approval, where, file);
  if (spec.timeout !== undefined && !(typeof spec.timeout === "number" && Number.isFinite(spec.timeout) && spec.timeout > 0)) {
    throw toolInvalid(`${where}: \`timeout\` must be a number of seconds above 0, got ${JSON.stringify(spec.timeout) ?? kindOf(spec.timeout)}`, { hint: "e.g. timeout: 30", file });
  }
  const { properties, required, defaults, inputSchema } = normalizeParameters(spec.parameters, { where, file });
  checkParameterSchemas(properties, { where, file });
  const metadata = toolMetadata({ title: spec.title, annotations: spec.annotations, outputSchema: spec.outputSchema }, where, file);
  return new FunctionTool({
    name,
    description: spec.description,
    properties,
    required,
    defaults,
    ...(spec.strict === undefined ? {} : { strict: spec.strict }),
    // The arguments are validated against the schema the author wrote `Args` for.
    run: spec.run as ToolRun,
    processor: spec.processor,
    source: spec.source,
    sideEffects: spec.sideEffects,
    approval: spec.approval,
    ...(spec.idempotent === undefined ? {} : { idempotent: spec.idempotent }),
    timeout: spec.timeout,
    inputSchema,
    ...metadata,
  });
}

const ANNOTATION_HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];

/** Check a tool's `title`, `annotations` and `outputSchema` (a zod one becomes JSON Schema). */
export function toolMetadata(given: { title?: unknown; annotations?: unknown; outputSchema?: unknown }, where: string, file?: string): { title?: string; annotations?: ToolAnnotations; outputSchema?: JsonSchema } {
  const out: { title?: string; annotations?: ToolAnnotations; outputSchema?: JsonSchema } = {};
  if (given.title !== undefined) {
    if (typeof given.title !== "string") throw toolInvalid(`${where}: \`title\` must be a string, got ${kindOf(given.title)}`, { file });
    out.title = given.title;
  }
  if (given.annotations !== undefined) {
    if (!isPlainObject(given.annotations)) throw toolInvalid(`${where}: \`annotations\` must be a mapping of hints, got ${kindOf(given.annotations)}`, { hint: `The hints are ${ANNOTATION_HINTS.join(", ")} (true or false).`, file });
    for (const [key, value] of Object.entries(given.annotations)) {
      if (!ANNOTATION_HINTS.includes(key)) throw toolInvalid(`${where}: unknown annotation \`${key}\``, { hint: `The hints are ${ANNOTATION_HINTS.join(", ")} (true or false).`, file });
      if (typeof value !== "boolean") throw toolInvalid(`${where}: annotation \`${key}\` must be true or false, got ${JSON.stringify(value) ?? kindOf(value)}`, { file });
    }
    out.annotations = given.annotations as ToolAnnotations;
  }
  if (given.outputSchema !== undefined) {
    const schema = isZodSchema(given.outputSchema) ? zodToJsonSchema(given.outputSchema, `${where} outputSchema`, file) : given.outputSchema;
    if (!isPlainObject(schema) || schema.type !== "object") throw toolInvalid(`${where}: \`outputSchema\` must be an object schema ({type: object, properties: …}), got ${isPlainObject(schema) ? `type ${JSON.stringify(schema.type)}` : kindOf(schema)}`, { hint: "MCP's structured results are JSON objects: describe the object's fields.", file });
    out.outputSchema = schema;
  }
  return out;
}

/** `approval` is `"required"`, `"never"`, or absent. */
export function checkApproval(approval: unknown, where: string, file?: string): void {
  if (approval !== undefined && approval !== "required" && approval !== "never") {
    throw toolInvalid(`${where}: \`approval\` must be "required" or "never", got ${JSON.stringify(approval) ?? kindOf(approval)}`, { file });
  }
}
