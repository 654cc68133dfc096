import { RunLimitError, SandboxError, ToolError } from "../errors.js";
import { compileWithCache } from "../util/sharedAjv.js";
import { secrets } from "../util/redact.js";
import { createArgumentValidator, type ArgumentCheck } from "./createArgumentValidator.js";
import { decideStrict } from "./decideStrict.js";
import { formatResult } from "./formatResult.js";
import type { FunctionCall } from "./FunctionCall.js";
import { isPlainObject, kindOf, type JsonSchema } from "./JsonSchema.js";
import { checkRequired } from "./normalizeParameters.js";
import { checkToolName } from "./toolName.js";
import { toolInvalid } from "./toolInvalid.js";
import { recordToolFailure } from "./toolFailure.js";
import { runInToolScope } from "./toolScope.js";
import { completeToolContext } from "./localToolContext.js";
import type { ToolContext } from "./ToolContext.js";
import { asToolResult, toolResultText } from "./toolResult.js";

export type { ToolContext, ToolRunContext } from "./ToolContext.js";

/**
 * What a tool's declaration says about its behaviour, as MCP's tool annotations (hints for clients: nothing is
 * enforced). A tool's `sideEffects` gives `readOnlyHint` when the annotations leave it out.
 */
export interface ToolAnnotations {
  /** The tool changes nothing outside itself. */
  readOnlyHint?: boolean;
  /** A tool that changes things may destroy data (true) or only add (false). */
  destructiveHint?: boolean;
  /** Calling it twice with the same arguments does no more than once. */
  idempotentHint?: boolean;
  /** It reaches an open world (the web) rather than a closed one (a database of the package). */
  openWorldHint?: boolean;
}

/** Which schema a call's arguments are checked against (see `FunctionTool.call`). */
export interface ToolCallOptions {
  /**
   * `model` (default): the schema the model sees (`parameters`). `inputSchema`: the schema as written, which MCP
   * clients see; used when serving over MCP, so that a client is held to exactly what it was shown.
   */
  validate?: "model" | "inputSchema";
}

/**
 * The brand every FunctionTool carries. It is a registered symbol so that a tool made by another copy of this
 * module (a tool file loaded through a transpiler gets its own copy) is still recognised: see `toFunctionTool`.
 */
export const TOOL_BRAND: unique symbol = Symbol.for("lllm.tool") as never;

/**
 * A tool's implementation: receives the validated arguments (defaults filled in) and, through `FunctionTool.call`,
 * a complete context (`ToolRunContext`); may be sync or async; throws to fail.
 */
export type ToolRun = (args: Record<string, unknown>, context: ToolContext) => unknown | Promise<unknown>;

/** Replaces the whole result text the model reads (seed 000, Step 6). */
export type ResultProcessor = (result: unknown, call: FunctionCall) => string;

/** Where a tool was defined, for messages. */
export interface ToolSource {
  file: string;
  /** The package ref, e.g. `weather.tools:get_weather`. */
  ref?: string;
}

/**
 * The fields of a FunctionTool. The schema fields are already normalised (see `normalizeParameters`); use `tool()`
 * or `declaration()` to build one from looser input. A FunctionTool has these fields as own properties, so
 * `new FunctionTool({ ...tool, source })` copies one.
 */
export interface FunctionToolOptions {
  name: string;
  description: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  /** Decided from the schema when absent (see `decideStrict`). */
  strict?: boolean;
  /** Defaults of top-level parameters, filled in before `run`; the published schema mentions them in descriptions. */
  defaults?: Record<string, unknown>;
  /** Absent for a declaration, which must be bound to an implementation before it can run. */
  run?: ToolRun | undefined;
  processor?: ResultProcessor | undefined;
  source?: ToolSource | undefined;
  /** Metadata: the tool changes something outside the run (used by approval and code-action). */
  sideEffects?: boolean | undefined;
  /** Metadata: whether a person must approve each call. */
  approval?: "required" | "never" | undefined;
  /**
   * Calling it again with the same arguments does no harm (a lookup, a write that sets the same value): a resumed run
   * (`lllm run --resume`) runs again a call of it whose outcome was never recorded. Default: true when the tool says
   * it changes nothing (`sideEffects: false`, or `annotations.readOnlyHint`), false otherwise (see `isIdempotent`).
   */
  idempotent?: boolean | undefined;
  /**
   * Its work is model and tool calls that a run's journal keeps themselves (a tactic or an agent used as a tool,
   * tool_chain): a resumed run calls it again, and those calls inside are answered from the journal.
   */
  replaysInside?: boolean | undefined;
  /** Seconds a call may take before it fails with a timeout the model reads (see `ToolSpec.timeout`). Default: none. */
  timeout?: number | undefined;
  /** A human-readable name for clients that show tools (MCP's `title`). */
  title?: string | undefined;
  /** Behaviour hints for MCP clients. */
  annotations?: ToolAnnotations | undefined;
  /** The parameters' schema as written (see `NormalizedParameters.inputSchema`); default: `parameters`. */
  inputSchema?: JsonSchema | undefined;
  /**
   * JSON Schema of the result's `structuredContent` (see `toolResult`): every call that succeeds must return data
   * (a plain object, or a `toolResult` with `structuredContent`) that fits it.
   */
  outputSchema?: JsonSchema | undefined;
}

/**
 * A tool: the schema the model sees plus, optionally, its implementation (LLLM's `Function`). Without `run` it is
 * a declaration, bound by exact name to an implementation elsewhere (seed 000, Step 7).
 */
export class FunctionTool {
  name: string;
  description: string;
  properties: Record<string, JsonSchema>;
  required: string[];
  strict: boolean;
  defaults: Record<string, unknown>;
  run?: ToolRun | undefined;
  processor?: ResultProcessor | undefined;
  source?: ToolSource | undefined;
  sideEffects?: boolean | undefined;
  approval?: "required" | "never" | undefined;
  idempotent?: boolean | undefined;
  replaysInside?: boolean | undefined;
  timeout?: number | undefined;
  title?: string | undefined;
  annotations?: ToolAnnotations | undefined;
  inputSchema?: JsonSchema | undefined;
  outputSchema?: JsonSchema | undefined;
  /** Compiled on the first call: most tools offered on a turn are never called. */
  #validator: ((args: unknown) => ArgumentCheck) | undefined;
  #inputSchemaValidator: ((args: unknown) => ArgumentCheck) | undefined;

  constructor(options: FunctionToolOptions) {
    const file = options.source?.file;
    this.name = checkToolName(options.name, file);
    const where = `tool \`${this.name}\``;
    if (typeof options.description !== "string") {
      throw toolInvalid(`${where} needs a \`description\` (a string)`, { hint: "Say what the tool does and when to use it: the model reads it to decide when to call it.", file });
    }
    for (const key of ["run", "processor"] as const) {
      if (options[key] !== undefined && typeof options[key] !== "function") {
        throw toolInvalid(`${where}: \`${key}\` must be a function, got ${typeof options[key]}`, {
          hint: key === "run" ? "Give `run: (args, context) => result` (it may be async)." : "Give `processor: (result, call) => string`.",
          file,
        });
      }
    }
    this.description = options.description;
    this.properties = options.properties ?? {};
    this.required = options.required ? checkRequired(options.required, this.properties, { where, file }) : [];
    this.strict = options.strict ?? decideStrict(this.properties, this.required);
    this.defaults = options.defaults ?? {};
    this.run = options.run;
    this.processor = options.processor;
    this.source = options.source;
    this.sideEffects = options.sideEffects;
    this.approval = options.approval;
    this.timeout = options.timeout;
    // Absent fields stay absent, so that `new FunctionTool({...tool})` copies a tool field for field.
    if (options.idempotent !== undefined) this.idempotent = options.idempotent;
    if (options.replaysInside !== undefined) this.replaysInside = options.replaysInside;
    if (options.title !== undefined) this.title = options.title;
    if (options.annotations !== undefined) this.annotations = options.annotations;
    if (options.inputSchema !== undefined) this.inputSchema = options.inputSchema;
    if (options.outputSchema !== undefined) this.outputSchema = options.outputSchema;
  }

  /** Recognised across copies of this module (see TOOL_BRAND). */
  get [TOOL_BRAND](): true {
    return true;
  }

  /** The JSON Schema of the arguments. */
  get parameters(): { type: "object"; properties: Record<string, JsonSchema>; required: string[]; additionalProperties: false } {
    return { type: "object", properties: this.properties, required: this.required, additionalProperties: false };
  }

  /** A schema without an implementation. */
  get isDeclaration(): boolean {
    return this.run === undefined;
  }

  /** The tool as an OpenAI-style function tool, exactly as seed 000, Step 1 prints it. */
  toTool(): { type: "function"; function: { name: string; description: string; parameters: FunctionTool["parameters"]; strict: boolean } } {
    return { type: "function", function: { name: this.name, description: this.description, parameters: this.parameters, strict: this.strict } };
  }

  /**
   * This declaration bound to an implementation: the declaration owns the interface (name, schema, description,
   * strict), the implementation supplies `run`, and its processor and metadata unless this one has its own.
   */
  bind(implementation: FunctionTool): FunctionTool {
    if (!implementation.run) {
      throw toolInvalid(`cannot bind tool \`${this.name}\` to \`${implementation.name}\`: that is a declaration too, with no implementation`, {
        hint: `Register an implementation (with a run function or a command) named exactly \`${this.name}\`.`,
        file: implementation.source?.file ?? this.source?.file,
      });
    }
    // An implementation written with a default (`unit = "celsius"`) should get it when the declaration leaves the
    // parameter optional without a default of its own, as a Python function's default argument would apply.
    const inherited = Object.fromEntries(Object.entries(implementation.defaults).filter(([name]) => Object.hasOwn(this.properties, name) && !this.required.includes(name)));
    return new FunctionTool({
      ...this,
      defaults: { ...inherited, ...this.defaults },
      run: implementation.run,
      processor: this.processor ?? implementation.processor,
      sideEffects: this.sideEffects ?? implementation.sideEffects,
      approval: this.approval ?? implementation.approval,
      idempotent: this.idempotent ?? implementation.idempotent,
      timeout: this.timeout ?? implementation.timeout,
      title: this.title ?? implementation.title,
      annotations: this.annotations ?? implementation.annotations,
      outputSchema: this.outputSchema ?? implementation.outputSchema,
    });
  }

  /** The schema MCP clients see: the parameters as written (`inputSchema`), or `parameters` when none was kept. */
  get publishedSchema(): JsonSchema {
    return this.inputSchema ?? this.parameters;
  }

  /**
   * Run the tool for one call, as the agent loop does: check the arguments, run, and fill in `result` and
   * `resultStr`. Whatever the tool or the model got wrong becomes `error` and `resultStr = "Error: <message>"`
   * for the model to read; `call()` throws only when the tool cannot run at all (a declaration that was never
   * bound, a schema that does not compile), which the user must fix, or when a limit of the whole run was reached
   * while it ran (`RunLimitError`), which stops the run. The context's missing capabilities get their local meaning
   * (see `ToolRunContext`). A rich result (`toolResult`) with `isError` fails the call with its text; one whose
   * `structuredContent` does not fit `outputSchema` (or that has no data when there is one) fails too.
   */
  async call(call: FunctionCall, context: ToolContext = {}, options: ToolCallOptions = {}): Promise<FunctionCall> {
    const run = this.run;
    if (!run) {
      throw new ToolError("tool_not_bound", `tool \`${this.name}\` is declared${this.source ? ` in ${this.source.file}` : ""} but has no implementation: register an implementation with the exact name \`${this.name}\``, {
        hint: "Define it in a package's tools/ folder (a .ts/.js export, or a .yaml with `command:`), or register it on the runtime.",
      });
    }
    delete call.result;
    delete call.resultStr;
    delete call.error;

    const checked = this.#argumentValidator(options.validate ?? "model")(call.arguments);
    // Before run: a schema that does not compile is the author's to fix, and the tool's side effects must not
    // happen first.
    const checkOutput = this.outputSchema !== undefined ? this.#outputChecker(this.outputSchema) : undefined;
    if (!checked.ok) return fail(call, `Invalid arguments for ${this.name}: ${checked.message}`);

    let result: unknown;
    try {
      result = await this.runWithin(run, checked.value, completeToolContext(context, this.name));
    } catch (error) {
      // A limit of the whole run (reached inside a nested tactic, say) stops the run: it is not this tool's failure.
      // So does a sandbox that cannot start (a limit too low for Python, a broken bubblewrap): the user must act, and
      // a model told of it would answer without the code it meant to run.
      if (error instanceof RunLimitError || isSandboxFailure(error)) throw error;
      // A timeout or a failed command is lllm's report, not an exception of the tool's code: no stack to show.
      if (!(error instanceof ToolError && (error.code === "tool_timeout" || error.code.startsWith("tool_command_")))) recordToolFailure(call, error, this.source?.file);
      return fail(call, errorMessage(error));
    }
    const rich = asToolResult(result);
    if (rich?.isError) {
      call.result = result;
      return fail(call, toolResultText(rich) || "the tool reported an error");
    }
    // The data of the result: a rich result's structuredContent, or a plain object returned as it is.
    const data = rich ? rich.structuredContent : isPlainObject(result) ? result : undefined;
    if (checkOutput) {
      // An MCP client holds a tool with an outputSchema to sending data: without it the client fails the call.
      if (data === undefined) {
        return fail(call, `${this.name} declares an outputSchema but returned no data: return an object, or toolResult({ structuredContent: {...} }) (got ${rich ? "a toolResult without structuredContent" : kindOf(result)})`);
      }
      const misfit = checkOutput(data);
      if (misfit !== undefined) return fail(call, `the result of ${this.name} does not match its outputSchema: ${misfit}`);
    }
    call.result = result;
    try {
      // What the model reads holds no key lllm knows of (a command that prints its environment, an API's echo of
      // its credentials): the provider is not told it, and no later tool call can be made to carry it elsewhere.
      call.resultStr = secrets.redactKnown(this.processor ? String(this.processor(result, call)) : formatResult(call));
    } catch (error) {
      return fail(call, `the result processor of ${this.name} failed: ${errorMessage(error)}`);
    }
    return call;
  }

  #argumentValidator(against: "model" | "inputSchema"): (args: unknown) => ArgumentCheck {
    const file = this.source?.file;
    if (against === "inputSchema" && this.inputSchema !== undefined) {
      this.#inputSchemaValidator ??= createArgumentValidator({ toolName: this.name, schema: this.inputSchema, file });
      return this.#inputSchemaValidator;
    }
    this.#validator ??= createArgumentValidator({ toolName: this.name, properties: this.properties, required: this.required, defaults: this.defaults, file });
    return this.#validator;
  }

  #outputValidator: ((structuredContent: Record<string, unknown>) => string | undefined) | undefined;

  /**
   * The checker of results against `outputSchema` (compiled on the first call): why `structuredContent` does not
   * fit, or undefined when it fits. A schema that does not compile is a `tool_invalid` ConfigError naming the file.
   */
  #outputChecker(outputSchema: JsonSchema): (structuredContent: Record<string, unknown>) => string | undefined {
    if (this.#outputValidator) return this.#outputValidator;
    const { $schema: _dialect, ...schema } = outputSchema;
    let validate: ReturnType<typeof compileWithCache>;
    try {
      validate = compileWithCache(schema);
    } catch (error) {
      throw toolInvalid(`tool \`${this.name}\`: its outputSchema is not a valid JSON Schema: ${errorMessage(error)}`, {
        hint: "Fix the outputSchema (see https://json-schema.org/understanding-json-schema).",
        file: this.source?.file,
        cause: error,
      });
    }
    this.#outputValidator = (structuredContent) => {
      // A copy: the validator fills in defaults, and the result goes out as the tool returned it.
      if (validate(structuredClone(structuredContent))) return undefined;
      return (validate.errors ?? []).map((error) => `${error.instancePath || "the data"} ${error.message ?? "is not valid"}`).join("; ");
    };
    return this.#outputValidator;
  }

  /** Run the implementation in its tool scope (see `toolScope`), within `timeout` when the tool has one. */
  private async runWithin(run: ToolRun, args: Record<string, unknown>, context: ToolContext): Promise<unknown> {
    const scope = { label: this.name, file: this.source?.file };
    if (this.timeout === undefined) return runInToolScope(scope, () => run(args, context));
    const controller = new AbortController();
    const signal = context.signal ? AbortSignal.any([context.signal, controller.signal]) : controller.signal;
    try {
      return await runWithTimeout({ name: this.name, timeout: this.timeout, run: () => runInToolScope(scope, () => run(args, { ...context, signal })) });
    } catch (error) {
      controller.abort(error);
      throw error;
    }
  }
}

/**
 * Whether a call of `tool` whose outcome was never recorded (its run stopped during it) may run again when the run
 * resumes: the tool says so (`idempotent`), or says it changes nothing (`sideEffects: false`, `readOnlyHint`).
 */
export function isIdempotent(tool: Pick<FunctionTool, "idempotent" | "sideEffects" | "annotations">): boolean {
  return tool.idempotent ?? (tool.sideEffects === false || tool.annotations?.readOnlyHint === true);
}

/**
 * Wait for a run at most `timeout` seconds. JavaScript cannot stop a function, so past the limit the call fails
 * (the model reads why) and the run's signal is aborted for the tool to stop what it started.
 */
async function runWithTimeout(options: { name: string; timeout: number; run: () => Promise<unknown> }): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new ToolError("tool_timeout", `tool ${options.name} did not finish within ${options.timeout} s`)), options.timeout * 1000);
  });
  try {
    return await Promise.race([options.run(), expired]);
  } finally {
    clearTimeout(timer);
  }
}

function fail(call: FunctionCall, message: string): FunctionCall {
  // An error's text goes to the model too (a command's stderr, an exception's message): without the keys in it.
  const text = secrets.redactKnown(message);
  call.error = text;
  call.resultStr = `Error: ${text}`;
  return call;
}

/** The message of anything thrown, including errors from another realm (which fail `instanceof Error`). */
function errorMessage(error: unknown): string {
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string") {
    const { message, name } = error as { message: string; name?: unknown };
    return message || (typeof name === "string" ? name : "unknown error");
  }
  return String(error);
}

/** A sandbox that could not start or is not there: not a mistake of the code that was to run in it. */
function isSandboxFailure(error: unknown): boolean {
  return error instanceof SandboxError && (error.code === "sandbox_start_failed" || error.code === "sandbox_unavailable" || error.code === "sandbox_prelude_failed");
}
