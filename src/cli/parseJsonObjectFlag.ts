import { ConfigError } from "../errors.js";
import type { ErrorCode } from "../errors.js";

/**
 * The value of a flag that takes a JSON object (`--args`, `--params`); a usage error naming the flag otherwise.
 * `example` is a valid value for the hint, e.g. `{"city": "Paris"}`.
 */
export function parseJsonObjectFlag(text: string, options: { flag: string; code: ErrorCode; example: string }): Record<string, unknown> {
  const { flag, code, example } = options;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(code, `${flag} is not valid JSON: ${(error as Error).message}`, { location: { file: flag }, hint: `Pass a JSON object in single quotes, e.g. ${flag} '${example}'.` });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigError(code, `${flag} must be a JSON object`, { location: { file: flag }, hint: `e.g. ${flag} '${example}'` });
  }
  return value as Record<string, unknown>;
}
