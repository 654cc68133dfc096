import { checkParameterSchemas } from "./checkParameterSchemas.js";
import { collectProblems, ConfigError, type ConfigProblem } from "../errors.js";
import { didYouMean } from "../util/closest.js";
import { FunctionTool, type ToolContext } from "./FunctionTool.js";
import { isPlainObject, kindOf } from "./JsonSchema.js";
import { normalizeParameters, type NormalizedParameters } from "./normalizeParameters.js";
import { runCommand } from "./runCommand.js";
import { checkApproval, toolMetadata } from "./tool.js";
import { checkToolName } from "./toolName.js";

/** The keys of a `tools/*.yaml` declaration. */
const KEYS = ["name", "description", "parameters", "command", "timeout", "side_effects", "idempotent", "approval", "strict", "title", "annotations", "output_schema"];

/** Seconds a command tool may run when its declaration gives no `timeout`. */
export const DEFAULT_COMMAND_TIMEOUT = 60;

/**
 * The tool a parsed `tools/*.yaml` file declares:
 * ```yaml
 * name: fetch_page
 * description: Fetch a web page
 * parameters: {url: {type: string}}
 * command: [python3, fetch.py]   # optional: without it, a declaration bound later by exact name
 * timeout: 30                    # seconds, default 60
 * side_effects: false
 * idempotent: true               # a call cut short by a stop may run again on resume (default: true when side_effects is false)
 * approval: never
 * title: Fetch a page             # for clients that show tools (MCP)
 * annotations: {readOnlyHint: true, openWorldHint: true}   # MCP's behaviour hints
 * output_schema: {type: object, properties: {…}}          # of rich results' structuredContent
 * ```
 * A command tool runs its program in `baseDir` (no shell) with the arguments as JSON on stdin; its stdout is the
 * result (parsed when it is JSON). Every problem in the file is reported at once, as a `tool_invalid` ConfigError.
 */
export function functionFromDeclaration(declaration: unknown, options: { file: string; baseDir: string }): FunctionTool {
  const { file } = options;
  const location = { file };
  if (!isPlainObject(declaration)) {
    throw ConfigError.fromProblems("tool_invalid", [{ message: `a tool declaration must be a mapping, got ${kindOf(declaration)}`, location, hint: "Write name:, description:, parameters: and optionally command: (a list, e.g. [python3, fetch.py])." }]);
  }
  const problems: ConfigProblem[] = [];
  // Every problem is reported at once, at the declaration's place.
  const attempt = <T>(check: () => T): T | undefined => {
    const found: ConfigProblem[] = [];
    const value = collectProblems(found, check);
    problems.push(...found.map((problem) => ({ ...problem, location })));
    return value;
  };

  for (const key of Object.keys(declaration)) {
    if (KEYS.includes(key)) continue;
    const suggestion = didYouMean(key, KEYS);
    problems.push({ message: `unknown key \`${key}\` in a tool declaration${suggestion ? `; ${suggestion}` : ""}`, location, hint: `Valid keys: ${KEYS.join(", ")}.` });
  }
  const name = attempt(() => checkToolName(declaration.name, file));
  const where = typeof declaration.name === "string" ? `tool \`${declaration.name}\`` : "the tool";
  if (typeof declaration.description !== "string") {
    problems.push({ message: `${where} needs a \`description\` (a string)${declaration.description === undefined ? "" : `, got ${kindOf(declaration.description)}`}`, location, hint: "Say what the tool does and when to use it: the model reads it." });
  }
  const parameters: NormalizedParameters | undefined = attempt(() => {
    const normalized = normalizeParameters(declaration.parameters, { where, file });
    checkParameterSchemas(normalized.properties, { where, file });
    return normalized;
  });
  const command = checkCommand(declaration.command, where, location, problems);
  const timeout = declaration.timeout;
  if (timeout !== undefined) {
    if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0) {
      problems.push({ message: `${where}: \`timeout\` must be a positive number of seconds, got ${JSON.stringify(timeout) ?? kindOf(timeout)}`, location });
    } else if (declaration.command === undefined) {
      problems.push({ message: `${where}: \`timeout\` only applies to a command tool`, location, hint: "Add `command:` or remove `timeout:`." });
    }
  }
  for (const key of ["side_effects", "idempotent", "strict"]) {
    if (declaration[key] !== undefined && typeof declaration[key] !== "boolean") problems.push({ message: `${where}: \`${key}\` must be true or false, got ${JSON.stringify(declaration[key])}`, location });
  }
  attempt(() => checkApproval(declaration.approval, where, file));
  const metadata = attempt(() => toolMetadata({ title: declaration.title, annotations: declaration.annotations, outputSchema: declaration.output_schema }, where, file));
  if (problems.length > 0 || name === undefined || parameters === undefined) throw ConfigError.fromProblems("tool_invalid", problems);

  const timeoutMs = (typeof timeout === "number" ? timeout : DEFAULT_COMMAND_TIMEOUT) * 1000;
  return new FunctionTool({
    name,
    description: declaration.description as string,
    ...parameters,
    ...(typeof declaration.strict === "boolean" ? { strict: declaration.strict } : {}),
    run: command && commandRun({ command, cwd: options.baseDir, timeoutMs, file }),
    source: { file },
    sideEffects: declaration.side_effects as boolean | undefined,
    ...(typeof declaration.idempotent === "boolean" ? { idempotent: declaration.idempotent } : {}),
    approval: declaration.approval as "required" | "never" | undefined,
    ...metadata,
  });
}

function checkCommand(command: unknown, where: string, location: { file: string }, problems: ConfigProblem[]): string[] | undefined {
  if (command === undefined) return undefined;
  if (typeof command === "string") {
    problems.push({ message: `${where}: \`command\` must be a list (no shell is used), got a string`, location, hint: `Write it as a list: [${command.trim().split(/\s+/).join(", ")}].` });
    return undefined;
  }
  if (!Array.isArray(command) || command.length === 0 || command.some((part) => typeof part !== "string" || part === "")) {
    problems.push({ message: `${where}: \`command\` must be a non-empty list of strings, got ${JSON.stringify(command)}`, location, hint: "For example command: [python3, fetch.py]." });
    return undefined;
  }
  return command as string[];
}

/** The `run` of a command tool: arguments as JSON on stdin, stdout as the result. */
function commandRun(options: { command: string[]; cwd: string; timeoutMs: number; file: string }): FunctionTool["run"] {
  return async (args: Record<string, unknown>, context: ToolContext) => {
    const stdout = await runCommand({ ...options, input: `${JSON.stringify(args)}\n`, signal: context.signal, env: context.env });
    return parseOutput(stdout);
  };
}

/**
 * A program's stdout as a result: one trailing newline removed (print() adds it), then JSON when it parses, so
 * that a program printing `{"temp": 18}` returns data. A bare number that JSON would alter (`1.50`, a 20-digit id)
 * stays text, so the model reads exactly what the program printed.
 */
export function parseOutput(stdout: string): unknown {
  const text = stdout.replace(/\r?\n$/, "");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  if (typeof parsed === "number" && String(parsed) !== text.trim()) return text;
  return parsed;
}
