import { ConfigError } from "../errors.js";

/** A flag's whole number, at least `minimum` (1 by default); a usage error (exit 2) naming the flag otherwise. */
export function positiveInteger(text: string, flag: string, hint: string, minimum = 1): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isInteger(value) || value < minimum) throw new ConfigError("usage_number", `${flag} must be a whole number >= ${minimum} (got \`${text}\`)`, { location: { file: flag }, hint });
  return value;
}
