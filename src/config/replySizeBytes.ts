import { ConfigError } from "../errors.js";
import { megabytesOf } from "../util/megabytesOf.js";

/**
 * A project's `reply_size` (settings) in bytes (the largest model reply read), or undefined for the default (64 MB). A bare
 * number is megabytes; one past a terabyte is surely a byte count, and refused.
 */
export function replySizeBytes(value: string | number | undefined, file?: string): number | undefined {
  if (value === undefined) return undefined;
  const megabytes = megabytesOf(value);
  if (megabytes === undefined || megabytes > 1024 * 1024) {
    throw new ConfigError("config_invalid", `reply_size \`${value}\` is not a size${typeof value === "number" ? " (a bare number is megabytes)" : ""}`, {
      ...(file ? { location: { file } } : {}),
      hint: 'Write megabytes as a number, or a size such as "64M" or "1G".',
    });
  }
  return Math.round(megabytes * 1024 * 1024);
}
