import { ConfigError, type ErrorCode } from "../errors.js";

/** A flag's number, checked by `valid`; a usage error (exit 2) naming the flag, what it takes and an example otherwise. */
export function numberFlag(text: string, flag: string, what: string, example: string, valid: (value: number) => boolean, code: ErrorCode = "usage_number"): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || !valid(value)) throw new ConfigError(code, `${flag} must be ${what} (got \`${text}\`)`, { location: { file: flag }, hint: `e.g. ${flag} ${example}` });
  return value;
}

/** A flag's number of seconds, above 0 (or at least 0 with `zero`). */
export function secondsFlag(text: string, flag: string, example: string, options: { zero?: boolean; code?: ErrorCode } = {}): number {
  return numberFlag(text, flag, `a number of seconds ${options.zero ? ">= 0" : "above 0"}`, example, (value) => (options.zero ? value >= 0 : value > 0), options.code);
}
