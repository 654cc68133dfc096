import { formatLocation, isLllmError, type LllmError } from "../errors.js";
import { redactSecrets } from "../util/redact.js";

/**
 * stdout carries only the answer (data for pipelines); everything else goes to stderr. Colour only on a terminal
 * and never with NO_COLOR (chalk itself ignores NO_COLOR, so the decision is made here).
 */
export function useColor(stream: NodeJS.WriteStream = process.stderr): boolean {
  if ("NO_COLOR" in process.env && process.env.NO_COLOR !== "") return false;
  if (process.env.FORCE_COLOR && process.env.FORCE_COLOR !== "0") return true;
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

/** Everything printed passes the one redaction: no key a provider or proxy used is ever shown, in any encoding. */
export function writeOut(text: string): void {
  const safe = redactSecrets(text);
  process.stdout.write(safe.endsWith("\n") ? safe : `${safe}\n`);
}

export function writeErr(text: string): void {
  const safe = redactSecrets(text);
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
  const where = error.location && !error.message.startsWith(error.location.file) ? `${formatLocation(error.location)}: ` : "";
  const singleProblem = !("problems" in error) || (error as { problems: unknown[] }).problems.length <= 1;
  const hint = error.hint && singleProblem && !error.message.includes(error.hint) ? `\n  ${paint("dim", error.hint)}` : "";
  return `${paint("red", "lllm: error:")} ${where}${error.message}${hint}`;
}
