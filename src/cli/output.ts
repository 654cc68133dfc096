import { ConfigError, formatLocation, isLllmError, type ErrorCode, type LllmError } from "../errors.js";
import { redactSecrets } from "../util/redact.js";
import { writeOwnStdout } from "../util/ownStdout.js";
import { terminalText } from "../util/terminalText.js";

/**
 * stdout carries only the answer (data for pipelines); everything else goes to stderr. The one decision for colour,
 * per stream: never with NO_COLOR (`--no-color` sets it), which wins over everything; then FORCE_COLOR (`0` or
 * `false`: off, any other value: on, even into a pipe); else only on a terminal.
 */
export function useColor(stream: NodeJS.WriteStream = process.stderr): boolean {
  if ("NO_COLOR" in process.env && process.env.NO_COLOR !== "") return false;
  const force = process.env.FORCE_COLOR;
  if (force !== undefined && force !== "") return force !== "0" && force.toLowerCase() !== "false";
  return Boolean(stream.isTTY);
}

const codes = { red: [31, 39], yellow: [33, 39], dim: [2, 22], bold: [1, 22], green: [32, 39], cyan: [36, 39] } as const;
type Style = keyof typeof codes;

/** Style text for stderr (plain when colour is off). Tiny on purpose: start-up time matters more than features. */
export function paint(style: Style, text: string, stream: NodeJS.WriteStream = process.stderr): string {
  if (!useColor(stream)) return text;
  const [open, close] = codes[style];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

/**
 * Everything printed passes the one redaction: no key a provider or proxy used is ever shown, in any encoding.
 * stdout is data: written byte for byte into a pipe or a file; on a terminal, control characters other than
 * lllm's own colours are shown as escapes (see `terminalText`), so that text a model or a tool produced cannot
 * drive the terminal.
 */
export function writeOut(text: string): void {
  const safe = redactSecrets(text);
  const shown = process.stdout.isTTY ? terminalText(safe, { keepOwnStyles: true }) : safe;
  writeOwnStdout(shown.endsWith("\n") ? shown : `${shown}\n`);
}

/**
 * An answer (or data) that a model or a tool produced: byte for byte into a pipe or a file; on a terminal every
 * control character is shown as an escape, colours too, since none of them is lllm's own.
 */
export function writeAnswer(text: string): void {
  writeOut(process.stdout.isTTY ? terminalText(text) : text);
}

/**
 * stderr is for people, wherever it goes: its control characters other than lllm's own colours are always shown as
 * escapes. This is the last line of defence; what a model or a tool wrote is escaped where it is composed into a
 * line, before it is painted (`terminalText`), so that not even a colour of its own gets through.
 */
export function writeErr(text: string): void {
  const safe = terminalText(redactSecrets(text), { keepOwnStyles: true });
  process.stderr.write(safe.endsWith("\n") ? safe : `${safe}\n`);
}

export function warn(text: string): void {
  writeErr(`${paint("yellow", "lllm: warning:")} ${text}`);
}

/** Print an error the way a user should read it: what, where, how to fix; a stack only with --verbose. */
export function reportError(error: unknown, verbose: boolean): number {
  if (isLllmError(error)) {
    writeErr(formatLllmError(error));
    if (verbose && error.stack) writeErr(paint("dim", error.stack));
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  writeErr(`${paint("red", "lllm: internal error:")} ${message}`);
  writeErr(verbose && error instanceof Error && error.stack ? paint("dim", error.stack) : paint("dim", "Run again with --verbose for the stack trace, and report it if it is a bug."));
  return 1;
}

function formatLllmError(error: LllmError): string {
  // Not when the message names the file already (`the run log FILE is damaged`), unless the place adds a line.
  const named = error.location !== undefined && (error.message.startsWith(error.location.file) || (error.location.line === undefined && error.message.includes(error.location.file)));
  const where = error.location && !named ? `${formatLocation(error.location)}: ` : "";
  const singleProblem = !("problems" in error) || (error as { problems: unknown[] }).problems.length <= 1;
  const hint = error.hint && singleProblem && !error.message.includes(error.hint) ? `\n  ${paint("dim", error.hint)}` : "";
  return `${paint("red", "lllm: error:")} ${where}${error.message}${hint}`;
}

/**
 * The version of the JSON objects `--json` prints (success and failure alike). Raise it when a field changes
 * meaning or goes away; new fields do not change it.
 */
export const SCHEMA_VERSION = 1;

const failureDetails = new WeakMap<object, Record<string, unknown>>();

/**
 * Attach what a failed command still knows (usage so far, a code-action report, `valid: false`) to its error;
 * the CLI puts it into the one JSON object that `--json` prints on failure.
 */
export function addFailureDetails(error: unknown, details: Record<string, unknown>): void {
  if (typeof error !== "object" || error === null) return;
  failureDetails.set(error, { ...failureDetails.get(error), ...details });
}

let runningDetails: (() => Record<string, unknown>) | undefined;

/**
 * What the running command knows so far (a run's usage), for a failure that has no error object to carry it:
 * the event loop draining while a tool never settles (see `failIfLoopDrains`).
 */
export function setRunningDetails(provider: () => Record<string, unknown>): void {
  runningDetails = provider;
}

export function runningCommandDetails(): Record<string, unknown> {
  return runningDetails?.() ?? {};
}

/** The one JSON object a `--json` command prints on failure: `{schema_version, error: {code, message, hint}, …}`. */
export function failureJson(error: unknown, fallbackCode: ErrorCode = "internal_error"): Record<string, unknown> {
  const details = typeof error === "object" && error !== null ? failureDetails.get(error) : undefined;
  if (!isLllmError(error)) {
    const message = error instanceof Error ? error.message : String(error);
    return { schema_version: SCHEMA_VERSION, ...details, error: { code: fallbackCode, message, hint: null } };
  }
  const problems = "problems" in error && Array.isArray(error.problems) && error.problems.length > 0 ? (error.problems as Array<{ message: string; location?: { file: string; line?: number; column?: number }; hint?: string }>) : undefined;
  const location = error.location ?? (problems?.length === 1 ? problems[0]!.location : undefined);
  return {
    schema_version: SCHEMA_VERSION,
    ...details,
    error: {
      code: error.code,
      message: error.message,
      hint: error.hint ?? null,
      ...(location ? { file: location.file, line: location.line ?? null, column: location.column ?? null } : {}),
    },
    // Only the first problems are kept (ConfigError.problems); the count says how many there were.
    ...(error instanceof ConfigError && error.problemCount > error.problems.length ? { problem_count: error.problemCount } : {}),
    ...(problems
      ? {
          problems: problems.map((problem) => ({
            message: problem.message,
            ...(problem.location ? { file: problem.location.file, line: problem.location.line ?? null, column: problem.location.column ?? null } : {}),
            hint: problem.hint ?? null,
          })),
        }
      : {}),
  };
}
